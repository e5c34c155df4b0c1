"""The CLI's rough edges, each as a user meets it: --help that names no Python types, a list of
sessions, the warm graph of a project named from anywhere, an expand that only reads from a
terminal, and an `eval` that says what to do outside a checkout."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from inspect_builders import cli_home, settings_for, small_session, storage_session
from typer.main import get_command
from typer.testing import CliRunner

from rolling_graph.cli import eval as cli_eval
from rolling_graph.store.journal import read_journal
from rolling_graph.store.project import project_root
from rolling_graph.store.sidecar import SidecarStore

ROOT = Path(__file__).resolve().parents[2]
PG = "use-postgresql-for-the-warm-store"


def rgraph(*args: str) -> tuple[int, str]:
    from rolling_graph.cli.main import app

    result = CliRunner().invoke(app, list(args), env={"COLUMNS": "200"})
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.output


@pytest.fixture()
def home(isolated_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return cli_home(tmp_path, monkeypatch, isolated_home)


# --- --help ------------------------------------------------------------------------------


def command_paths() -> list[list[str]]:
    """Every command and group of ``rgraph``, as the argv that reaches it (the root is [])."""
    from rolling_graph.cli.main import app

    paths: list[list[str]] = []

    def walk(command: Any, path: list[str]) -> None:
        paths.append(path)
        for name, sub in sorted(getattr(command, "commands", {}).items()):
            walk(sub, [*path, name])

    walk(get_command(app), [])
    return paths


def test_help_of_every_command_names_no_python_types() -> None:
    paths = command_paths()
    assert ["db", "stop"] in paths and ["sessions"] in paths and len(paths) > 15
    for path in paths:
        code, out = rgraph(*path, "--help")
        assert code == 0, (path, out)
        assert "<bool>" not in out, (path, out)
        assert "<list[" not in out, (path, out)


def test_help_keeps_the_explanations_and_shows_list_arguments_readably() -> None:
    code, out = rgraph("replay", "--help")
    assert code == 0
    assert "{TRANSCRIPT}..." in out and "later files of a seen session replay as a resume" in out
    assert "Let hooks reconcile into the warm graph" in out
    code, out = rgraph("eval", "--help")
    assert "--budget" in out and "<int>" in out  # a repeatable option shows the type of one value


def test_version_prints_the_installed_version() -> None:
    code, out = rgraph("--version")
    assert code == 0 and out.startswith("rgraph ")


# --- rgraph sessions ---------------------------------------------------------------------


def _age(settings: Any, sid: str, stamp: float) -> None:
    for path in settings.sessions_dir.glob(f"{sid}.*"):
        os.utime(path, (stamp, stamp))


def test_sessions_lists_every_session_newest_first_with_project_times_nodes_and_events(home: Path) -> None:
    settings = settings_for(home)
    storage = storage_session(settings)
    small_session(settings, "sess-old", "/src/old-app", ["One", "Two"])
    small_session(settings, "sess-new", "/src/new-app", ["Three"])
    now = 1_800_000_000
    for sid, stamp in ((storage, now - 50), ("sess-old", now - 100), ("sess-new", now)):
        _age(settings, sid, stamp)
    code, out = rgraph("sessions", "--json")
    assert code == 0
    rows = json.loads(out)
    assert [r["session_id"] for r in rows] == ["sess-new", storage, "sess-old"]
    new, mid, old = rows
    assert (new["project"], new["nodes"], new["events"]) == ("/src/new-app", 1, 10)
    store = SidecarStore(settings)
    assert (mid["project"], mid["nodes"], mid["events"]) == ("/work/app", len(store.load(storage)["nodes"]), 40)
    first = read_journal(store.journal_path("sess-old"))[0]
    assert old["nodes"] == 2 and old["started"] == first["at"] == "2026-11-25T21:10:00Z"  # its first journal entry
    assert new["last_activity"] == "2027-01-15T08:00:00Z"  # the files' time: the listing's own order
    code, table = rgraph("sessions")
    assert code == 0
    lines = [line for line in table.splitlines() if "sess-" in line]
    assert [line.split("│")[1].strip() for line in lines] == ["sess-new", storage, "sess-old"]
    assert "/src/new-app" in lines[0] and "2027-01-15 08:00" in lines[0]


def test_sessions_with_none_yet_says_how_to_get_one(home: Path) -> None:
    code, out = rgraph("sessions")
    assert code == 0
    assert "no sessions under" in out and "rgraph demo --keep" in out
    assert rgraph("sessions", "--json") == (0, "[]\n")


def test_a_missing_session_points_to_rgraph_sessions(home: Path) -> None:
    storage_session(settings_for(home))
    code, out = rgraph("show", "--session", "nope")
    assert code == 1 and "`rgraph sessions` lists them" in out


# --- show --warm --project ---------------------------------------------------------------


def test_show_warm_with_project_reads_that_projects_warm_graph_from_anywhere(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rolling_graph.warm import read

    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    (project / "src").mkdir()
    seen: list[str] = []

    def warm_document(settings: object, root: str) -> dict[str, object]:
        seen.append(root)
        return {"session_id": "warm", "nodes": {"pg": {"label": "PostgreSQL warm", "domain": "technical", "weight": 0.9}},
                "edges": {}, "focus": []}

    monkeypatch.setattr(read, "warm_document", warm_document)
    code, out = rgraph("show", "--warm", "--project", str(project / "src"))
    assert code == 0, out
    assert seen == [str(project)] and Path.cwd() != project
    assert f"Warm graph · {project}" in out and "PostgreSQL warm" in out


def test_show_project_picks_that_projects_latest_session(home: Path, tmp_path: Path) -> None:
    settings = settings_for(home)
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    small_session(settings, "sess-mine", project_root(str(project)), ["Mine only"])
    small_session(settings, "sess-other", "/somewhere/else", ["Other project"])
    _age(settings, "sess-mine", 1_800_000_000 - 100)
    _age(settings, "sess-other", 1_800_000_000)
    code, out = rgraph("show", "--project", str(project))
    assert code == 0
    assert "Mine only" in out and "Other project" not in out and "this project's latest session" in out


# --- expand: read only unless --activate -------------------------------------------------


def test_expand_from_a_terminal_only_reads(home: Path) -> None:
    storage = storage_session(settings_for(home))
    store = SidecarStore(settings_for(home))
    before = store.load(storage)["nodes"][PG]
    entries = len(read_journal(store.journal_path(storage)))
    code, out = rgraph("expand", PG, "--session", storage)
    assert code == 0
    assert "Rolling Graph plugin" in out  # the branch is printed
    assert "read only" in out and "--activate" in out
    after = store.load(storage)["nodes"][PG]
    assert (after["weight"], after["activations"]) == (before["weight"], before["activations"])
    assert len(read_journal(store.journal_path(storage))) == entries


def test_expand_with_activate_and_the_slash_command_count_as_an_activation(home: Path) -> None:
    storage = storage_session(settings_for(home))
    store = SidecarStore(settings_for(home))
    weights = [store.load(storage)["nodes"][PG]["weight"]]
    code, out = rgraph("expand", PG, "--activate", "--session", storage)
    assert code == 0 and "counted as an activation" in out
    weights.append(store.load(storage)["nodes"][PG]["weight"])
    code, out = rgraph("slash", "--activate", f"--session={storage}", "expand", PG)  # as commands/graph.md runs it
    assert code == 0 and "counted as an activation" in out
    weights.append(store.load(storage)["nodes"][PG]["weight"])
    assert weights[0] < weights[1] < weights[2]
    code, out = rgraph("slash", f"--session={storage}", "expand", PG)  # without the flag: reads
    assert "read only" in out and store.load(storage)["nodes"][PG]["weight"] == weights[2]


# --- eval outside a checkout -------------------------------------------------------------


def test_eval_outside_a_checkout_says_what_to_pass(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    installed = tmp_path / "site-packages"  # an installed package: no fixtures beside it
    (installed / "rolling_graph").mkdir(parents=True)
    monkeypatch.setattr(cli_eval, "SOURCE_ROOT", installed)
    assert cli_eval.default_fixtures() is None
    result = CliRunner().invoke(_app(), ["eval"])
    assert result.exit_code == 1
    [line] = result.stderr.splitlines()  # one clause and the command that works without a checkout
    assert line == "rgraph: no fixtures to score here: measure your own sessions with `rgraph eval --transcripts ~/.claude/projects/<project>/`"
    assert str(installed) not in line


def test_eval_finds_the_checkouts_fixtures_from_any_directory_in_an_editable_install(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cli_eval, "SOURCE_ROOT", ROOT)  # an editable install's source tree is the checkout
    assert Path.cwd() != ROOT
    assert cli_eval.default_fixtures() == ROOT / "fixtures" / "transcripts"


def test_eval_finds_the_checkouts_fixtures_from_inside_it_in_any_install(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cli_eval, "SOURCE_ROOT", tmp_path / "site-packages")
    monkeypatch.chdir(ROOT)
    assert cli_eval.default_fixtures() == ROOT / "fixtures" / "transcripts"


def _app() -> Any:
    from rolling_graph.cli.main import app

    return app


# -- errors of the machine are one line with the cause and the fix (issue 36, case 12) ----------
def test_a_state_directory_that_cannot_be_written_is_one_line_with_the_fix_not_an_internal_error(tmp_path: Path) -> None:
    import subprocess
    import sys

    blocker = tmp_path / "a-file"
    blocker.write_text("")
    env = {**os.environ, "ROLLING_GRAPH_HOME": str(blocker / "home"), "ROLLING_GRAPH_WARM": "off"}
    exe = str(Path(sys.executable).with_name("rgraph"))
    done = subprocess.run([exe, "show"], capture_output=True, text=True, env=env, timeout=60)

    assert done.returncode == 1
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "internal error" not in lines[0] and "Traceback" not in done.stderr
    assert lines[0].startswith("rgraph: ") and "ROLLING_GRAPH_HOME" in lines[0] and str(blocker / "home") in lines[0]


def test_a_read_only_state_directory_and_an_unreachable_ollama_say_what_to_do(capsys: pytest.CaptureFixture[str]) -> None:
    import errno

    from rolling_graph.cli.console import report

    assert report(PermissionError(errno.EROFS, "Read-only file system", "/home/ada/.claude/rolling-graph/sessions/s.state.json")) == 1
    assert report(ConnectionError("Failed to connect to Ollama. Please check that Ollama is downloaded, running and accessible.")) == 1
    read_only, ollama = [line for line in capsys.readouterr().err.splitlines() if line]
    assert read_only.startswith("rgraph: cannot write /home/ada/.claude/rolling-graph/sessions/s.state.json: Read-only file system")
    assert "ROLLING_GRAPH_HOME" in read_only and "internal error" not in read_only
    assert "Failed to connect to Ollama" in ollama and "ollama serve" in ollama and "internal error" not in ollama


# --- issue 37: the rough edges a new user met ---------------------------------------------------


def rgraph_split(*args: str, columns: int = 200, stdin: str | None = None) -> tuple[int, str, str]:
    """``rgraph ARGS`` with stdout and stderr apart (what `rgraph … > file` keeps, and what it does not)."""
    result = CliRunner().invoke(_app(), list(args), env={"COLUMNS": str(columns)}, input=stdin)
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def test_show_of_a_project_directory_that_does_not_exist_fails_in_one_line(home: Path) -> None:
    storage_session(settings_for(home))  # another project's session, which must not be shown instead
    code, out, err = rgraph_split("show", "--project", "/nonexistent")
    assert code == 1 and out == ""
    assert err.splitlines() == ["rgraph: no directory /nonexistent: --project takes a project's directory (leave it out for this one)"]
    code, out, err = rgraph_split("show", "--warm", "--project", "/nonexistent")
    assert code == 1 and "no directory /nonexistent" in err


def test_show_of_a_project_without_sessions_says_so_instead_of_showing_another(home: Path, tmp_path: Path) -> None:
    storage_session(settings_for(home))
    project = tmp_path / "quiet-project"
    (project / ".git").mkdir(parents=True)
    code, out, err = rgraph_split("show", "--project", str(project))
    assert code == 1 and "Use PostgreSQL" not in out
    [line] = err.splitlines()
    assert f"no session of the project {project}" in line and "`rgraph sessions`" in line


def test_replay_of_a_file_that_is_no_transcript_fails_with_what_a_transcript_is(home: Path) -> None:
    code, out, err = rgraph_split("replay", str(ROOT / "README.md"))
    assert code == 1 and "bad_json" not in out
    [line] = err.splitlines()
    assert line.startswith(f"rgraph: not a Claude Code transcript: {ROOT / 'README.md'}") and ".jsonl" in line


def test_damage_warnings_go_to_stderr_and_never_into_the_shown_graph(home: Path) -> None:
    settings = settings_for(home)
    sid = storage_session(settings)
    graph = SidecarStore(settings).graph_path(sid)
    document = json.loads(graph.read_text())
    graph.write_text(json.dumps({**document, "edges": "torn"}))  # wrong-shaped: rebuilt from the journal, with a note
    code, out, err = rgraph_split("show", "--session", sid)
    assert code == 0 and "Use PostgreSQL" in out
    assert "rgraph: " in err and "rgraph: " not in out, (out, err)
    code, out, err = rgraph_split("show", "--session", sid, "--format", "json")
    assert json.loads(out)["nodes"], "the JSON document stays parseable"


def test_a_question_mark_at_the_review_prompt_shows_what_each_answer_does() -> None:
    from rich.console import Console

    from rolling_graph.graduation.review_prompt import read_choice

    answers = iter(["?", "maybe", "approve"])
    console = Console(record=True, width=200)
    assert read_choice(console, lambda: next(answers)) == "a"
    said = console.export_text()
    assert said.count("s  skip (Enter)") == 2 and "'maybe' is not a choice." in said
    assert read_choice(console, lambda: "s") == "s"


def test_doctor_says_the_settings_in_words_not_as_a_python_repr(isolated_home: Path) -> None:
    env = dict(os.environ, ROLLING_GRAPH_DSN="postgresql://127.0.0.1:1/none", ROLLING_GRAPH_WARM="on", COLUMNS="250")
    result = CliRunner().invoke(_app(), ["doctor", "--no-network"], env=env)
    [settings] = [line for line in result.output.splitlines() if line.startswith("│ settings")]
    assert "Settings(" not in result.output and "dsn=" not in result.output
    assert "warm graph on (a DSN you set)" in settings and "probe offline, sync" in settings


def test_stats_counts_in_words_and_never_prints_none(home: Path) -> None:
    from rolling_graph.cli.stats import graduation_text

    settings = settings_for(home)
    small_session(settings, "sess-one", "/src/app", ["One"])
    with SidecarStore(settings).transaction("sess-one") as doc:
        doc["counters"].update({"events": 2, "prompts": 1, "tool_events": 1, "injections": 1})
    code, out, _ = rgraph_split("stats", "--session", "sess-one")
    assert code == 0 and "2 (1 prompt, 1 tool result)" in out and "over 1 injection ·" in out
    no_judged = {"candidates": 1, "pending": 1, "approved": 0, "rejected": 0, "duplicates": 0, "kept_30d": 0,
                 "edited": 0, "deleted": 0, "judged_30d": 0, "kept_share": None}
    text = graduation_text(no_judged)
    assert "None" not in text and "kept_share" not in text and "_" not in text
    assert text.startswith("1 candidate · 1 pending") and "none old enough to judge yet" in text
    assert "2 of 3 (67%)" in graduation_text({**no_judged, "kept_30d": 2, "judged_30d": 3, "kept_share": 0.667})


def test_eval_at_80_columns_keeps_every_fixture_and_method_whole(home: Path) -> None:
    code, out, err = rgraph_split("eval", "--fixtures-dir", str(ROOT / "fixtures" / "transcripts"),
                                  "--fixture", "four_domains", "--budget", "800", columns=80)
    assert code == 0, err
    assert "…" not in out
    assert "four_domains @ 800" in out and "frequent" in out and "recent" in out
    assert max(len(line) for line in out.splitlines()) <= 80


def test_the_readme_lists_every_command_of_the_cli() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## Commands\n", 1)[1]
    listing = section.split("`.", 1)[0].split("`rgraph ", 1)[1]
    listed = {word for part in listing.split("|") for word in part.split()}
    paths = command_paths()
    commands = {" ".join(path) for path in paths if len(path) == 1}
    subcommands = {path[-1] for path in paths if len(path) == 2}
    assert commands - listed == set(), f"commands missing from the README's list: {sorted(commands - listed)}"
    assert subcommands - listed == set(), f"subcommands missing from the README's list: {sorted(subcommands - listed)}"
    assert listed - commands - subcommands == set(), "the README lists commands the CLI does not have"


def test_help_names_the_slash_command_by_its_namespaced_name() -> None:
    import re

    bare = re.compile(r"(?<![\w:./-])/graph\b(?![\w./-])")
    for path in command_paths():
        code, out = rgraph(*path, "--help")
        assert not bare.search(out), (path, out)
    assert "/rolling-graph:graph" in rgraph("slash", "--help")[1]
