"""The one-way door through the CLI (typer's CliRunner, real PostgreSQL): approve, edit,
reject, refresh of stale drafts, the nightly command, the memory export and seeding."""

from __future__ import annotations

import stat
from datetime import UTC, datetime, timedelta
from pathlib import Path

import graduation_support as gs_
import pytest
import typer
import warm_support as ws
from freezegun import freeze_time
from typer.testing import CliRunner

from rolling_graph.cli import graduation as graduation_cli
from rolling_graph.core.config import Settings
from rolling_graph.core.errors import UserError
from rolling_graph.graduation import review

pytestmark = pytest.mark.db

T0 = datetime(2026, 11, 1, 9, tzinfo=UTC)


dsn = ws.database("grev")


@pytest.fixture
def settings(tmp_path: Path, dsn: str, monkeypatch: pytest.MonkeyPatch) -> Settings:
    monkeypatch.setenv("ROLLING_GRAPH_HOME", str(tmp_path))
    monkeypatch.setenv("ROLLING_GRAPH_DSN", dsn)
    monkeypatch.setenv("ROLLING_GRAPH_WARM", "on")
    monkeypatch.setenv("ROLLING_GRAPH_EMBEDDER", "lexical")
    monkeypatch.setenv("ROLLING_GRAPH_REVIEWER", "ada")
    return ws.settings_for(tmp_path, dsn)


@pytest.fixture
def proj(tmp_path: Path) -> tuple[Path, str]:
    return gs_.project_dir(tmp_path)


def cli(*args: str, input: str | None = None) -> tuple[int, str]:
    app = typer.Typer()
    graduation_cli.register(app)
    result = CliRunner().invoke(app, list(args), input=input)
    # A UserError leaves the command as an exception; ``rgraph`` prints it as one line.
    error = str(result.exception) if isinstance(result.exception, UserError) else ""
    return result.exit_code, result.output + error


def sessions(settings: Settings, root: str, count: int = 3, *, with_hooks: bool = False) -> None:
    for i in range(count):
        at = T0 + timedelta(days=i)
        gs_.storage_session(settings, f"s{i + 1}", root, at)
        if with_hooks:
            nodes = [ws.node("Keep hooks under 50 ms", 0.9, at=at, kind="preference"),
                     ws.node("Hook latency", 0.5, at=at), ws.node("Import cost", 0.5, at=at)]
            edges = [("keep-hooks-under-50-ms", "informs", "hook-latency", 0.8), ("import-cost", "blocks", "keep-hooks-under-50-ms", 0.6)]
            gs_.reconcile(settings, gs_.write_session(settings, f"s{i + 1}", root, nodes, edges, at=at, rationale="the user set a budget"))


def graduate(project: Path, *extra: str) -> tuple[int, str]:
    return cli("graduate", "--nightly", "--project", str(project), *extra)


def draft_ids(settings: Settings, root: str, status: str = "pending") -> dict[str, int]:
    return {r[0]: r[1] for r in gs_.rows(
        settings, "SELECT d.node_id, d.id FROM graduation_drafts d JOIN projects p ON p.id = d.project_id "
                  "WHERE p.root = %s AND d.status = %s", root, status)}


def export_bullets(settings: Settings, root: str) -> dict[int, str]:
    return review.parse_export(review.memory_path(settings, root).read_text(encoding="utf-8"))


def test_nightly_command_prints_one_line_writes_report_and_is_idempotent(settings: Settings, proj: tuple[Path, str], tmp_path: Path) -> None:
    path, root = proj
    sessions(settings, root, with_hooks=True)
    report = tmp_path / "report.md"
    code, out = graduate(path, "--report", str(report))
    assert code == 0, out
    assert out.strip().count("\n") == 0 and out.startswith("graduate: 2 new candidates, 2 drafted")
    text = report.read_text(encoding="utf-8")
    assert text.count("\n## Draft ") == 2 and "Provenance:" in text and "—supersedes→" in text
    code, out = graduate(path, "--report", str(report))
    assert code == 0 and out.startswith("graduate: 0 new candidates, 0 drafted") and "2 pending review" in out
    assert len(draft_ids(settings, root)) == 2
    assert report.read_text(encoding="utf-8").count("\n## Draft ") == 2


def test_approve_writes_flat_memory_anchor_and_export(settings: Settings, proj: tuple[Path, str]) -> None:
    path, root = proj
    sessions(settings, root)
    graduate(path)
    draft = draft_ids(settings, root)["use-postgresql"]
    code, out = cli("review", "--approve", str(draft))
    assert code == 0 and f"draft {draft} approved as memory" in out
    [(content, by, sessions_, events, model)] = gs_.rows(
        settings, "SELECT content, approved_by, sessions, events, model FROM flat_memories WHERE draft_id = %s", draft)
    assert by == "ada" and sessions_ == ["s1", "s2", "s3"] and len(events) == 3 and model == "lexical-hash-v1"
    assert list(export_bullets(settings, root).values()) == [content]
    [(anchor, floor, seed_weight)] = gs_.rows(settings, "SELECT anchor, floor, seed_weight FROM nodes WHERE id = 'use-postgresql' "
                                                        "AND project_id = %s", gs_.pid_of(settings, root))
    assert anchor and floor == pytest.approx(0.2) and seed_weight == pytest.approx(0.8)
    code, out = cli("review", "--approve", str(draft))
    assert code == 1 and "not pending" in out


def test_edit_approves_the_reviewers_wording(settings: Settings, proj: tuple[Path, str]) -> None:
    path, root = proj
    sessions(settings, root)
    graduate(path)
    draft = draft_ids(settings, root)["use-postgresql"]
    code, out = cli("review", "--edit", str(draft), "--text", "The warm store is PostgreSQL with pgvector, never SQLite.")
    assert code == 0, out
    [(content, edited)] = gs_.rows(settings, "SELECT content, edited_in_review FROM flat_memories WHERE draft_id = %s", draft)
    assert content == "The warm store is PostgreSQL with pgvector, never SQLite." and edited


def test_reject_is_remembered_until_the_node_changes(settings: Settings, proj: tuple[Path, str]) -> None:
    path, root = proj
    sessions(settings, root)
    graduate(path)
    draft = draft_ids(settings, root)["use-postgresql"]
    code, out = cli("review", "--reject", str(draft), "--reason", "too obvious")
    assert code == 0 and "will not be proposed again" in out
    assert graduate(path)[1].startswith("graduate: 0 new candidates")
    gs_.storage_session(settings, "s4", root, T0 + timedelta(days=5), summary="Chosen for pgvector and concurrent sessions")
    assert graduate(path)[1].startswith("graduate: 1 new candidates, 1 drafted")
    assert not gs_.rows(settings, "SELECT 1 FROM flat_memories WHERE node_id = 'use-postgresql' AND project_id = %s",
                        gs_.pid_of(settings, root))


def test_node_changed_after_drafting_forces_refresh_before_approval(settings: Settings, proj: tuple[Path, str]) -> None:
    path, root = proj
    sessions(settings, root)
    graduate(path)
    old = draft_ids(settings, root)["use-postgresql"]
    gs_.storage_session(settings, "s4", root, T0 + timedelta(days=5), summary="Chosen for pgvector and concurrent sessions")
    code, out = cli("review", "--approve", str(old))
    assert code == 1 and "changed after draft" in out and "refreshed as draft" in out
    assert draft_ids(settings, root, "stale") == {"use-postgresql": old}
    new = draft_ids(settings, root)["use-postgresql"]
    assert new != old
    [(content, replaces)] = gs_.rows(settings, "SELECT content, replaces FROM graduation_drafts WHERE id = %s", new)
    assert "Chosen for pgvector and concurrent sessions" in content and replaces == old
    assert not gs_.rows(settings, "SELECT 1 FROM flat_memories WHERE draft_id = %s", old)
    assert cli("review", "--approve", str(new))[0] == 0


def test_interactive_review_approves_edits_and_rejects(settings: Settings, proj: tuple[Path, str], tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    path, root = proj
    sessions(settings, root, with_hooks=True)
    graduate(path)
    editor = tmp_path / "editor.sh"
    editor.write_text("#!/bin/sh\nprintf 'Hooks stay under 50 ms: import heavy SDKs lazily.\\n# a comment\\n' > \"$1\"\n")
    editor.chmod(editor.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("EDITOR", str(editor))
    monkeypatch.delenv("VISUAL", raising=False)
    code, out = cli("review", "--project", str(path), input="e\nr\n")
    assert code == 0, out
    assert "Provenance" in out and "Neighbourhood" in out
    assert "1 of 2" in out and "2 of 2" in out
    assert "Reviewed 2 of 2: 0 approved, 1 edited, 1 rejected, 0 skipped; 0 still pending." in out
    assert f"add this line to {path / 'CLAUDE.md'}" in out.replace("\n", "")
    assert review.import_line(settings, root) in out.replace("\n", "")
    memories = [r[0] for r in gs_.rows(settings, "SELECT content FROM flat_memories WHERE project_id = %s", gs_.pid_of(settings, root))]
    assert memories == ["Hooks stay under 50 ms: import heavy SDKs lazily."]
    assert len(draft_ids(settings, root, "rejected")) == 1 and draft_ids(settings, root) == {}


def test_quitting_the_review_summarises_it_and_leaves_the_rest_pending(settings: Settings, proj: tuple[Path, str]) -> None:
    path, root = proj
    sessions(settings, root, with_hooks=True)
    graduate(path)
    code, out = cli("review", "--project", str(path), input="s\nq\n")
    assert code == 0, out
    assert "1 of 2" in out and "2 of 2" in out
    assert "Reviewed 1 of 2: 0 approved, 0 edited, 0 rejected, 1 skipped; 2 still pending." in out
    assert "@" not in out.split("still pending.")[1]  # nothing approved yet: no memory file to import
    assert len(draft_ids(settings, root)) == 2


def test_import_hint_says_when_claude_md_already_imports_the_memories(settings: Settings, proj: tuple[Path, str]) -> None:
    path, root = proj
    sessions(settings, root)
    graduate(path)
    code, out = cli("review", "--approve", str(draft_ids(settings, root)["use-postgresql"]))
    assert code == 0 and review.import_line(settings, root) in out.replace("\n", "")
    (path / "CLAUDE.md").write_text(f"# App\n\n{review.import_line(settings, root)}\n", encoding="utf-8")
    assert review.import_hint(settings, root) == f"{path / 'CLAUDE.md'} already imports the approved memories ({review.import_line(settings, root)})."


def test_export_contains_exactly_the_approved_memories_and_reads_back_user_changes(settings: Settings, proj: tuple[Path, str]) -> None:
    path, root = proj
    sessions(settings, root, with_hooks=True)
    graduate(path)
    ids = draft_ids(settings, root)
    assert cli("review", "--approve", str(ids["keep-hooks-under-50-ms"]))[0] == 0
    assert cli("review", "--reject", str(ids["use-postgresql"]))[0] == 0
    approved = dict(gs_.rows(settings, "SELECT id, content FROM flat_memories WHERE project_id = %s", gs_.pid_of(settings, root)))
    assert export_bullets(settings, root) == approved and len(approved) == 1
    text = review.memory_path(settings, root).read_text(encoding="utf-8")
    assert "# Project memory: proj" in text and "## Preferences" in text and "Use PostgreSQL" not in text
    # the user rewrites the bullet; the next export keeps the edit and records it
    [mid] = approved
    review.memory_path(settings, root).write_text(text.replace(approved[mid], "Hooks must stay under 50 ms."), encoding="utf-8")
    graduate(path)
    assert export_bullets(settings, root) == {mid: "Hooks must stay under 50 ms."}
    assert gs_.rows(settings, "SELECT outcome FROM graduation_outcomes WHERE memory_id = %s", mid) == [("edited",)]
    # then deletes it and adds a note of their own: the memory is gone and counted, the note stays
    review.memory_path(settings, root).write_text("# Project memory: proj\n\n- my own reminder\n", encoding="utf-8")
    graduate(path)
    assert export_bullets(settings, root) == {}
    assert review.memory_path(settings, root).read_text(encoding="utf-8").endswith("- my own reminder\n")
    assert sorted(r[0] for r in gs_.rows(settings, "SELECT outcome FROM graduation_outcomes WHERE memory_id = %s", mid)) == ["deleted", "edited"]


def test_seed_from_markdown_sets_floors_and_kind_weights_idempotently(settings: Settings, proj: tuple[Path, str], tmp_path: Path) -> None:
    path, root = proj
    notes = tmp_path / "CLAUDE.md"
    notes.write_text(
        "# Project notes\n\n@~/.claude/rolling-graph/memory/x.md\n\n## Corrections\n- Never run migrations by hand\n\n"
        "## Decisions\n- Use uv for the virtualenv\n\n## Misc\n- Preference: tabs are banned in YAML\n- The CI runs on two cores\n"
        "```\n- not a note\n```\n",
        encoding="utf-8",
    )
    for _ in range(2):
        code, out = cli("seed", "--project", str(path), "--from", str(notes))
        assert code == 0 and out.startswith("seed: 4 anchor nodes"), out
    got = {r[0]: r[1:] for r in gs_.rows(
        settings, "SELECT n.id, n.weight, n.floor, n.anchor, n.kind FROM nodes n JOIN projects p ON p.id = n.project_id "
                  "WHERE p.root = %s", root)}
    assert got == {
        "never-run-migrations-by-hand": (pytest.approx(0.9), pytest.approx(0.2), True, "correction"),
        "use-uv-for-the-virtualenv": (pytest.approx(0.8), pytest.approx(0.2), True, "decision"),
        "preference-tabs-are-banned-in-yaml": (pytest.approx(0.7), pytest.approx(0.2), True, "preference"),
        "the-ci-runs-on-two-cores": (pytest.approx(0.6), pytest.approx(0.2), True, "concept"),
    }
    assert len(gs_.rows(settings, "SELECT 1 FROM seeded_anchors s JOIN projects p ON p.id = s.project_id WHERE p.root = %s", root)) == 4


def test_seed_approved_anchors_graduated_nodes(settings: Settings, proj: tuple[Path, str]) -> None:
    path, root = proj
    sessions(settings, root)
    graduate(path)
    pid = gs_.pid_of(settings, root)
    assert cli("review", "--all-approve", "--project", str(path))[0] == 0
    gs_.execute(settings, "UPDATE nodes SET anchor = false, floor = 0 WHERE project_id = %s", pid)
    code, out = cli("seed", "--approved", "--project", str(path))
    assert code == 0 and out.startswith("seed: 1 anchor nodes"), out
    assert gs_.rows(settings, "SELECT id, anchor, floor FROM nodes WHERE project_id = %s AND anchor", pid) == [
        ("use-postgresql", True, pytest.approx(0.2))]


def test_list_shows_pending_drafts(settings: Settings, proj: tuple[Path, str]) -> None:
    path, root = proj
    sessions(settings, root)
    graduate(path)
    code, out = cli("review", "--list", "--project", str(path))
    pending = draft_ids(settings, root)
    assert code == 0 and "Drafts waiting for review" in out
    assert all(nid in out and str(did) in out for nid, did in pending.items()) and "use-postgresql" in pending


def test_archive_review_keep_or_archive_through_the_cli(settings: Settings, proj: tuple[Path, str], tmp_path: Path) -> None:
    path, root = proj
    notes = tmp_path / "notes.md"
    notes.write_text("- Never push to main directly\n- Deploys happen on Tuesdays\n", encoding="utf-8")
    assert cli("seed", "--project", str(path), "--from", str(notes))[0] == 0
    pid = gs_.pid_of(settings, root)
    gs_.execute(settings, "UPDATE nodes SET weight = floor, at_floor_since = %s WHERE project_id = %s", T0, pid)
    with freeze_time(T0 + timedelta(weeks=6)):
        code, out = graduate(path)
    assert code == 0 and "2 queued for archive review" in out
    reviews = dict(gs_.rows(settings, "SELECT node_id, id FROM archive_reviews WHERE project_id = %s", pid))
    assert cli("review", "--keep-anchor", str(reviews["never-push-to-main-directly"]))[0] == 0
    assert cli("review", "--archive", str(reviews["deploys-happen-on-tuesdays"]))[0] == 0
    assert dict(gs_.rows(settings, "SELECT id, anchor FROM nodes WHERE project_id = %s", pid)) == {
        "never-push-to-main-directly": True, "deploys-happen-on-tuesdays": False}
    code, out = cli("review", "--archive", str(reviews["deploys-happen-on-tuesdays"]))
    assert code == 1 and "no pending archive review" in out


def test_superseded_decision_never_graduates(settings: Settings, proj: tuple[Path, str]) -> None:
    path, root = proj
    for i in range(3):
        at = T0 + timedelta(days=i)
        nodes = [ws.node("Use SQLite for the warm store", 0.9, at=at, kind="decision"),
                 ws.node("Use PostgreSQL for the warm store", 0.9, at=at, kind="decision", node_id="use-postgresql"),
                 ws.node("Single-file database", 0.6, at=at), ws.node("Warm graph store", 0.6, at=at)]
        edges = [("use-postgresql", "supersedes", "use-sqlite-for-the-warm-store", 0.9),
                 ("use-sqlite-for-the-warm-store", "informs", "single-file-database", 0.7),
                 ("use-postgresql", "informs", "warm-graph-store", 0.7)]
        gs_.reconcile(settings, gs_.write_session(settings, f"s{i + 1}", root, nodes, edges, at=at))
    graduate(path)
    assert set(draft_ids(settings, root)) == {"use-postgresql"}


def test_interactive_review_refreshes_a_stale_draft_before_showing_it(settings: Settings, proj: tuple[Path, str]) -> None:
    path, root = proj
    sessions(settings, root)
    graduate(path)
    gs_.storage_session(settings, "s4", root, T0 + timedelta(days=5), summary="Chosen for pgvector and concurrent sessions")
    code, out = cli("review", "--project", str(path), input="a\n")
    assert code == 0 and "changed after draft" in out
    [(content,)] = gs_.rows(settings, "SELECT content FROM flat_memories WHERE project_id = %s", gs_.pid_of(settings, root))
    assert "Chosen for pgvector and concurrent sessions" in content
