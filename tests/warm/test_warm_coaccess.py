"""Co-access edges in the warm graph (real embedded PostgreSQL): recorded at reconcile, weighted
across sessions, seeded from git for a project the warm graph does not know, and carried
into the resume snapshot's notes."""

from __future__ import annotations

import os
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import warm_support as ws

from rolling_graph.core.filepaths import file_id
from rolling_graph.warm import git_seed, notes_cache, snapshot_files

pytestmark = pytest.mark.db

T0 = datetime(2026, 11, 1, tzinfo=UTC)

dsn = ws.database("coacc")
_lexical = ws.lexical_embedder
settings = ws.warm_settings
project = ws.project_in_tmp


def file_node(path: str, *, at: datetime, edits: int = 1, **facts: Any) -> dict[str, Any]:
    n = ws.node(path, 0.6, at=at, kind="file", node_id=file_id(path))
    n["facts"] = {"path": path, "edits": edits, **facts}
    return n


def session(sid: str, project: str, paths: list[str], at: datetime, extra: list[dict[str, Any]] = ()) -> dict[str, Any]:  # type: ignore[assignment]
    """A session that touched ``paths`` one minute apart, in that order."""
    nodes = [file_node(p, at=at + timedelta(minutes=i)) for i, p in enumerate(paths)]
    return ws.hot_doc(sid, project, [*nodes, *extra], at=at + timedelta(minutes=len(paths)))


def pairs(settings, project: str) -> dict[tuple[str, str], tuple[float, float, int, int]]:  # type: ignore[no-untyped-def]
    return {(a, b): (w, f, s, e) for a, b, w, f, s, e in ws.rows(
        settings, "SELECT a, b, weight, a_first, sessions, either FROM co_access c JOIN projects p ON p.id = c.project_id WHERE p.root = %s",
        project)}


def test_files_touched_together_across_sessions_get_a_weighted_directed_edge(settings, project) -> None:  # type: ignore[no-untyped-def]
    ws.reconcile(settings, session("s1", project, ["api/handler.py", "api/config.py"], T0))
    ws.reconcile(settings, session("s2", project, ["api/handler.py", "api/config.py", "docs/api.md"], T0 + timedelta(hours=1)))
    ws.reconcile(settings, session("s3", project, ["docs/api.md"], T0 + timedelta(hours=2)))
    found = pairs(settings, project)
    weight, a_first, both, either = found[("api/config.py", "api/handler.py")]
    assert (both, either) == (2, 2)
    assert weight == pytest.approx(1.0)
    assert a_first == 0.0  # the handler was opened first every time
    weight, _, both, either = found[("api/handler.py", "docs/api.md")]
    assert (both, either) == (1, 3)
    assert weight == pytest.approx(1 / 3, abs=0.02)


def test_reconciling_a_session_again_replaces_its_files_and_counts_it_once(settings, project) -> None:  # type: ignore[no-untyped-def]
    first = session("s1", project, ["a.py", "b.py"], T0)
    ws.reconcile(settings, first)
    later = session("s1", project, ["a.py", "c.py"], T0)
    later["journal_seq"] = 5
    ws.reconcile(settings, later)
    assert set(pairs(settings, project)) == {("a.py", "c.py")}


def test_a_pulled_file_the_session_never_touched_is_no_co_access(settings, project) -> None:  # type: ignore[no-untyped-def]
    pulled = file_node("old.py", at=T0)
    pulled.update({"pulled": True, "activations": 0})
    ws.reconcile(settings, session("s1", project, ["a.py", "b.py"], T0, [pulled]))
    assert set(pairs(settings, project)) == {("a.py", "b.py")}


def _git(repo: Path, *args: str, when: int) -> None:
    stamp = f"{when} +0000"
    env = dict(os.environ, GIT_AUTHOR_DATE=stamp, GIT_COMMITTER_DATE=stamp, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.com",
               GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.com")
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=env)


#: A day before the first session (the repository's recent history).
GIT_T0 = int((T0 - timedelta(days=1)).timestamp())


def make_repo(repo: Path) -> None:
    """Three commits: the parser and its test twice together, the README alone."""
    repo.mkdir(parents=True)
    _git(repo, "init", "-q", when=GIT_T0)
    for n, files in enumerate([["src/parser.py", "tests/test_parser.py"], ["README.md"], ["src/parser.py", "tests/test_parser.py", "src/lexer.py"]]):
        for f in files:
            (repo / f).parent.mkdir(parents=True, exist_ok=True)
            (repo / f).write_text(f"{f} {n}\n", encoding="utf-8")
        _git(repo, "add", "-A", when=GIT_T0 + n * 3600)
        _git(repo, "commit", "-q", "-m", f"change {n}", when=GIT_T0 + n * 3600)


def test_a_project_the_warm_graph_does_not_know_starts_from_its_git_history(settings, tmp_path) -> None:  # type: ignore[no-untyped-def]
    repo = tmp_path / "repo"
    make_repo(repo)
    root = str(repo)
    ws.reconcile(settings, session("first", root, ["src/parser.py"], T0, [ws.node("Parser rewrite", at=T0)]))
    found = pairs(settings, root)
    weight, a_first, both, either = found[("src/parser.py", "tests/test_parser.py")]
    assert (both, either) == (2, 3)  # two commits together; the session touched the parser alone
    assert 0.6 < weight < 2 / 3  # the commits, a day older, say a little less than the session
    assert a_first == 0.5  # a commit lists its files by name: no order
    sources = ws.rows(settings, "SELECT source, count(*) FROM co_access_sessions c JOIN projects p ON p.id = c.project_id "
                                "WHERE p.root = %s GROUP BY source", root)
    assert dict(sources) == {"git": 3, "session": 1}
    # The snapshot's notes name the partner for a file no session has touched yet.
    notes = notes_cache.read_notes(settings.home, root)
    assert notes[file_id("tests/test_parser.py")]["with"][0][0] == "src/parser.py"
    # Seeded once: a later reconcile does not read git again.
    make_more = repo / "src" / "extra.py"
    make_more.write_text("x\n", encoding="utf-8")
    (repo / "README.md").write_text("y\n", encoding="utf-8")
    _git(repo, "add", "-A", when=GIT_T0 + 20_000)
    _git(repo, "commit", "-q", "-m", "more", when=GIT_T0 + 20_000)
    ws.reconcile(settings, session("second", root, ["src/parser.py", "src/lexer.py"], T0 + timedelta(hours=1)))
    assert ("README.md", "src/extra.py") not in pairs(settings, root)


def test_git_log_parsing_skips_merges_sweeps_and_garbage() -> None:
    text = ("\x1eabc1234 1700000000\n\nsrc/a.py\nsrc/b.py\n"
            "\x1enot-a-sha 1700000000\n\nx.py\ny.py\n"
            "\x1edef5678 1700000100\n\n" + "\n".join(f"f{i}.py" for i in range(40)) + "\n"
            "\x1e0123abc 1700000200\n\n/etc/passwd\nsrc/c.py\n")
    commits = git_seed.parse_log(text, max_files=30)
    assert [(c.sha, c.files) for c in commits] == [("abc1234", ("src/a.py", "src/b.py")), ("0123abc", ("src/c.py",))]


def test_no_repository_seeds_nothing(tmp_path: Path) -> None:
    assert git_seed.read_commits(str(tmp_path)) == []


def test_the_snapshot_carries_each_files_history_for_the_notes(settings, project) -> None:  # type: ignore[no-untyped-def]
    err = ws.node("src/app.py:12:3: undefined name 'x'", at=T0, kind="error")
    err["facts"] = {"state": "resolved", "from": "ruff check"}
    first = session("s1", project, ["src/app.py", "src/util.py"], T0, [err])
    first["nodes"][file_id("src/app.py")]["facts"].update({"edits": 4, "what": "`load_config`, `main`"})
    ws.reconcile(settings, first)
    ws.reconcile(settings, session("s2", project, ["src/app.py", "src/util.py"], T0 + timedelta(hours=3)))
    notes = notes_cache.read_notes(settings.home, project)
    assert isinstance(notes, notes_cache.Notes), "read from the cache beside the snapshot"
    entry = notes[file_id("src/app.py")]
    assert entry["sessions"] == 2 and entry["edits"] == 4
    assert entry["what"] == "`load_config`, `main`"
    assert entry["with"][0][:1] == ["src/util.py"]
    assert entry["failure"] == {"text": "src/app.py:12:3: undefined name 'x'", "state": "resolved", "from": "ruff check"}
    # The hook reads the notes from their cache beside the snapshot: the same content.
    cache = Path(snapshot_files.cache_file(settings.home, project, "notes"))
    assert cache.is_file()
    Path(snapshot_files.snapshot_file(settings.home, project)).touch()  # a snapshot newer than its cache: read the file itself
    os.utime(snapshot_files.snapshot_file(settings.home, project), ns=(1, 1))
    from_file = notes_cache.read_notes(settings.home, project)
    assert isinstance(from_file, dict) and from_file == dict(notes.items())


def test_a_forgotten_file_is_no_partner_in_any_note(settings, project) -> None:  # type: ignore[no-untyped-def]
    from rolling_graph.warm import db, forget

    for n in range(2):
        ws.reconcile(settings, session(f"s{n}", project, ["src/app.py", "src/secret_plan.py"], T0 + timedelta(hours=n)))
    assert notes_cache.read_notes(settings.home, project)[file_id("src/app.py")]["with"][0][0] == "src/secret_plan.py"
    with db.connect(settings) as conn:
        forget.forget_ids(conn, settings, project, [file_id("src/secret_plan.py")])
    notes = notes_cache.read_notes(settings.home, project)
    assert notes[file_id("src/app.py")] is not None and "secret_plan" not in str(dict(notes.items()))


def test_direction_comes_from_the_sessions_first_touch_not_the_warm_graphs_first_sight(settings, project) -> None:  # type: ignore[no-untyped-def]
    """A file pulled from the warm graph carries an earlier session's ``first_seen`` and no
    opening of this session: the order is the session-only ``first`` fact (the session's first
    event naming the file), which is never merged into the warm node."""
    ws.reconcile(settings, session("s1", project, ["lib/store.py", "lib/cache.py"], T0))
    at = T0 + timedelta(days=1)
    # s2 touches the cache first (event 3), then the store (event 9), then a new file (event 12);
    # both old files were pulled, with the warm graph's first sight (s1's, store before cache).
    cache = file_node("lib/cache.py", at=T0 + timedelta(minutes=1), first=3, seq=9)
    store = file_node("lib/store.py", at=T0, first=9, seq=9)
    new = file_node("lib/index.py", at=at + timedelta(minutes=30), first=12, seq=12)
    for pulled in (cache, store):
        pulled.update({"pulled": True, "activations": 2, "last_activated": (at + timedelta(minutes=20)).isoformat()})
    ws.reconcile(settings, ws.hot_doc("s2", project, [cache, store, new], at=at + timedelta(hours=1)))
    found = pairs(settings, project)
    _, cache_first, both, _ = found[("lib/cache.py", "lib/store.py")]
    assert both == 2
    assert cache_first == pytest.approx(0.5, abs=0.02)  # s1: store first; s2: cache first (about equal say)
    assert found[("lib/cache.py", "lib/index.py")][1] == 1.0  # the pulled cache came before the new file
    assert found[("lib/index.py", "lib/store.py")][1] == 0.0  # and so did the pulled store
    files = ws.rows(settings, "SELECT files FROM co_access_sessions c JOIN projects p ON p.id = c.project_id "
                              "WHERE p.root = %s AND session_id = 's2'", project)
    assert files == [(["lib/cache.py", "lib/store.py", "lib/index.py"],)]
    facts = ws.rows(settings, "SELECT n.facts FROM nodes n JOIN projects p ON p.id = n.project_id WHERE p.root = %s AND n.kind = 'file'", project)
    assert facts and all("first" not in f and "seq" not in f for (f,) in facts)  # session-only: never a durable fact
