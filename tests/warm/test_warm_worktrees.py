"""Cross-session memory of one repository: sessions in two of its git worktrees reconcile into
one warm graph and share their files, commands and code names; another repository shares
nothing; and the next session's ``SessionStart(startup)`` block says what the last one was
doing, what it left open and which decisions are in force. Real ``git worktree add``, real
hooks (offline probe, in process), a real embedded PostgreSQL."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import warm_support as ws

from rolling_graph.core.config import ProbeSettings, Settings
from rolling_graph.hook import handle_event
from rolling_graph.store.project import project_root
from rolling_graph.store.sidecar import SidecarStore
from rolling_graph.warm.snapshot import read_snapshot
from rolling_graph.warm.snapshot_files import snapshot_file

pytestmark = pytest.mark.db

dsn = ws.database("wt")
_lexical = ws.lexical_embedder

T_A, T_B, T_C, T_NEXT = "2026-11-20T10:00:00Z", "2026-11-20T14:00:00Z", "2026-11-20T15:00:00Z", "2026-11-21T09:00:00Z"


def git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", "-c", "user.email=t@example.com", "-c", "user.name=t", *args], cwd=cwd, check=True, capture_output=True)


def new_repo(path: Path) -> Path:
    path.mkdir(parents=True)
    git("init", "-q", cwd=path)
    (path / "src").mkdir()
    (path / "src" / "app.py").write_text("def compute_total(items):\n    return sum(items)\n")
    git("add", ".", cwd=path)
    git("commit", "-q", "-m", "init", cwd=path)
    return path.resolve()


@pytest.fixture
def worktrees(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A repository and two linked worktrees of it."""
    repo = new_repo(tmp_path / "app")
    one, two = tmp_path / "app-wt" / "fix-rounding", tmp_path / "app-wt" / "invoice-tests"
    git("worktree", "add", "-q", str(one), cwd=repo)
    git("worktree", "add", "-q", str(two), cwd=repo)
    return repo, one.resolve(), two.resolve()


class Session:
    """One Claude Code session driven through the real hook handler (offline probe, sync)."""

    def __init__(self, home: Path, sid: str, cwd: Path, at: str) -> None:
        self.sid, self.cwd = sid, str(cwd)
        self.settings = Settings(home=home, warm=False, probe=ProbeSettings(backend="offline", mode="sync"), embedder="lexical").at(at)

    def event(self, name: str, **payload: Any) -> dict[str, Any] | None:
        base = {"session_id": self.sid, "cwd": self.cwd, "transcript_path": f"{self.cwd}/.t-{self.sid}.jsonl"}
        return handle_event(name, {**base, **payload}, self.settings)  # type: ignore[return-value]

    def start(self) -> str:
        out = self.event("session-start", hook_event_name="SessionStart", source="startup")
        return str(((out or {}).get("hookSpecificOutput") or {}).get("additionalContext") or "")

    def prompt(self, text: str) -> None:
        self.event("user-prompt-submit", hook_event_name="UserPromptSubmit", prompt=text)

    def tool(self, tool: str, tool_input: dict[str, Any], response: Any = None) -> None:
        self.event("post-tool-use", hook_event_name="PostToolUse", tool_name=tool, tool_input=tool_input,
                   tool_response=response if response is not None else {}, tool_use_id=f"toolu_{tool}")

    def edit(self, rel: str, old: str, new: str) -> None:
        path = f"{self.cwd}/{rel}"
        self.tool("Edit", {"file_path": path, "old_string": old, "new_string": new}, {"filePath": path})

    def end(self) -> Any:
        self.event("stop", hook_event_name="Stop")
        self.event("session-end", hook_event_name="SessionEnd", reason="other")
        return SidecarStore(self.settings).load(self.sid)


def reconcile(home: Path, dsn: str, doc: Any, at: str) -> None:
    ws.reconcile(ws.settings_for(home, dsn).at(at), doc)


def after_session_a(tmp_path: Path, dsn: str, cwd: Path) -> Path:
    """A state directory whose warm graph holds session A (run in ``cwd``), reconciled."""
    home = tmp_path / "home"
    reconcile(home, dsn, session_a(home, cwd), T_A)
    return home


def session_a(home: Path, cwd: Path) -> Any:
    """Asks for a fix, keeps a task list, decides, edits, and leaves a test failing."""
    a = Session(home, "sess-a", cwd, T_A)
    a.start()
    a.prompt("Invoice totals are rounded wrong in src/app.py: fix compute_total. We decided to use Decimal for money, not float.")
    a.tool("TodoWrite", {"todos": [
        {"content": "Fix rounding in compute_total", "status": "in_progress", "activeForm": "Fixing rounding"},
        {"content": "Add a regression test for invoice totals", "status": "pending", "activeForm": "Adding a test"},
        {"content": "Reproduce the rounding bug", "status": "completed", "activeForm": "Reproducing"}]})
    a.edit("src/app.py", "def compute_total(items):\n    return sum(items)", "def compute_total(items):\n    return round_money(sum(items))")
    a.tool("Bash", {"command": f"cd {cwd} && pytest tests/test_app.py -q"},
           "Error: Exit code 1\nFAILED tests/test_app.py::test_invoice_total - AssertionError: 10.01 != 10.0\n1 failed, 3 passed in 0.12s")
    return a.end()


def session_b(home: Path, cwd: Path) -> Any:
    """Another worktree: the same file, the same function, the same test command (absolute path)."""
    b = Session(home, "sess-b", cwd, T_B)
    b.start()
    b.prompt("Make compute_total in src/app.py handle an empty invoice.")
    b.edit("src/app.py", "    return round_money(sum(items))", "    return round_money(sum(items)) if items else Decimal(0)")
    b.tool("Bash", {"command": f"pytest {cwd}/tests/test_app.py -q"}, {"stdout": "4 passed in 0.10s", "stderr": ""})
    return b.end()


def warm_rows(settings: Settings, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    return ws.rows(settings, sql, *params)


def test_two_worktrees_of_one_repository_reconcile_into_one_graph_and_share_files(
    worktrees: tuple[Path, Path, Path], tmp_path: Path, dsn: str
) -> None:
    repo, one, two = worktrees
    home = tmp_path / "home"
    doc_a, doc_b = session_a(home, one), None
    assert doc_a["project"] == str(repo) and "src-app-py" in doc_a["nodes"]
    reconcile(home, dsn, doc_a, T_A)
    doc_b = session_b(home, two)
    assert doc_b["project"] == str(repo)
    reconcile(home, dsn, doc_b, T_B)

    settings = ws.settings_for(home, dsn)
    projects = warm_rows(settings, "SELECT root FROM projects WHERE root LIKE %s", str(tmp_path) + "%")
    assert projects == [(str(repo),)]
    shared = dict((r[0], r[1:]) for r in warm_rows(
        settings, "SELECT n.id, n.label, n.session_count, n.facts FROM nodes n JOIN projects p ON p.id = n.project_id "
                  "WHERE p.root = %s", str(repo)))
    label, sessions, facts = shared["src-app-py"]
    assert (label, sessions) == ("src/app.py", 2)
    assert facts["path"] == "src/app.py" and facts["edits"] >= 1 and "seq" not in facts
    assert shared["compute-total"][1] == 2  # a code name: one node across worktrees
    # The test command, run by relative path in one worktree and by absolute path in the other.
    assert shared["pytest-tests-test-app-py-q"][1] == 2
    # No node is keyed or labelled by either worktree's absolute path.
    assert not [nid for nid, (lab, _, _) in shared.items() if "app-wt" in nid or str(tmp_path) in lab]


def test_an_unrelated_repository_shares_nothing(worktrees: tuple[Path, Path, Path], tmp_path: Path, dsn: str) -> None:
    repo, one, _ = worktrees
    other = new_repo(tmp_path / "billing")
    home = after_session_a(tmp_path, dsn, one)
    c = Session(home, "sess-c", other, T_C)
    context = c.start()
    assert context == ""  # nothing of the other repository's warm graph comes in
    c.edit("src/app.py", "return sum(items)", "return sum(items) or 0")
    doc_c = c.end()
    assert doc_c["project"] == str(other) != str(repo)
    reconcile(home, dsn, doc_c, T_C)

    settings = ws.settings_for(home, dsn)
    by_project = {root: set(ids) for root, ids in warm_rows(
        settings, "SELECT p.root, array_agg(n.id) FROM nodes n JOIN projects p ON p.id = n.project_id "
                  "WHERE p.root = ANY(%s) GROUP BY p.root", [str(repo), str(other)])}
    assert "src-app-py" in by_project[str(repo)] and "src-app-py" in by_project[str(other)]  # same path, two projects
    assert not any(n.startswith(("req-", "task-", "use-decimal")) for n in by_project[str(other)])
    snap = read_snapshot(home, str(other))
    assert snap is not None and not any(n["id"].startswith(("req-", "task-")) for n in snap["nodes"])
    assert snapshot_file(home, str(other)) != snapshot_file(home, project_root(str(one)))


def test_the_next_sessions_startup_block_says_what_the_last_one_left(
    worktrees: tuple[Path, Path, Path], tmp_path: Path, dsn: str
) -> None:
    _, one, two = worktrees
    home = after_session_a(tmp_path, dsn, one)
    render = Settings(home=home).render
    for budget in (800, 400):
        nxt = Session(home, f"sess-next-{budget}", two, T_NEXT)
        nxt.settings.render = type(render)(**{**render.as_dict(), "budget_tokens": budget})
        block = nxt.start()
        assert len(block) <= budget * render.chars_per_token, block
        assert "Last request (user): \"Invoice totals are rounded wrong" in block
        assert "[in_progress] Fix rounding in compute_total" in block
        assert "Use Decimal for money" in block.split("Decisions in force:")[1]
        assert "Open problems: FAILED tests/test_app.py::test_invoice_total" in block
        assert "Reproduce the rounding bug" not in block  # completed: counted, not listed as open
        assert "Open tasks (1 done): " in block
        if budget == 800:
            assert "[pending] Add a regression test for invoice totals" in block
            assert "src/app.py — edited" in block


def test_the_reconcile_keeps_the_next_sessions_block_and_it_is_the_one_the_hook_renders(
    worktrees: tuple[Path, Path, Path], tmp_path: Path, dsn: str
) -> None:
    # The worker's snapshot carries the block of the project's next new session
    # (rolling_graph/warm/startup_block.py): the next session is told exactly what the hook
    # renders itself without it.
    from rolling_graph.warm import snapshot_files, startup_block

    repo, one, two = worktrees
    home = after_session_a(tmp_path, dsn, one)
    kept = Path(snapshot_files.cache_file(home, str(repo), startup_block.PART))
    made = snapshot_files.read_cache(home, str(repo), startup_block.PART, snapshot_files.signature(Path(snapshot_files.snapshot_file(home, str(repo))).stat()))
    assert made is not None and "Fix rounding in compute_total" in made[2] and made[1] < T_NEXT
    told = Session(home, "sess-next", two, T_NEXT).start()
    assert told == made[2]
    kept.unlink()
    assert Session(home, "sess-next-2", two, T_NEXT).start() == told


def test_a_pulled_node_the_session_never_touched_is_no_contribution_of_it(
    worktrees: tuple[Path, Path, Path], tmp_path: Path, dsn: str
) -> None:
    repo, one, two = worktrees
    home = after_session_a(tmp_path, dsn, one)
    b = Session(home, "sess-b", two, T_B)
    assert "Use Decimal for money" in b.start()  # pulled from the snapshot
    b.edit("src/app.py", "    return round_money(sum(items))", "    return round_money(sum(items)) or 0")
    doc_b = b.end()
    assert doc_b["nodes"]["use-decimal-for-money-not-float"].get("pulled") and doc_b["nodes"]["use-decimal-for-money-not-float"]["activations"] == 0
    reconcile(home, dsn, doc_b, T_B)
    counts = dict(warm_rows(ws.settings_for(home, dsn), "SELECT n.id, n.session_count FROM nodes n JOIN projects p "
                                                        "ON p.id = n.project_id WHERE p.root = %s", str(repo)))
    assert counts["src-app-py"] == 2  # touched in both sessions
    assert counts["use-decimal-for-money-not-float"] == 1  # only handed to session B
    # The last session is B, which asked nothing: A's request and tasks are no longer "the last session's".
    snap = read_snapshot(home, str(repo))
    assert snap is not None and snap["last_session"] == "sess-b"
    assert not any(n["kind"] in ("request", "task") for n in snap["nodes"])
    assert "use-decimal-for-money-not-float" in {n["id"] for n in snap["nodes"]}  # a decision stays in force


def test_a_superseded_decision_is_never_shown_as_in_force(tmp_path: Path, dsn: str) -> None:
    from datetime import UTC, datetime, timedelta

    from rolling_graph.core.model import new_document
    from rolling_graph.render.restore import restore_block
    from rolling_graph.warm.snapshot import snapshot_ops

    project = str(tmp_path / "proj")
    t0 = datetime(2026, 11, 20, tzinfo=UTC)
    old = ws.node("Store money as float", 0.9, at=t0, kind="decision", domain="project")
    new = ws.node("Store money as Decimal", 0.6, at=t0 + timedelta(hours=1), kind="decision", domain="project")
    doc = ws.hot_doc("s1", project, [old, new], [(new["id"], "supersedes", old["id"], 0.9)], at=t0 + timedelta(hours=1))
    settings = ws.settings_for(tmp_path / "home", dsn)
    ws.reconcile(settings.at("2026-11-20T02:00:00Z"), doc)
    snap = read_snapshot(tmp_path / "home", project)
    assert snap is not None
    fresh = new_document("s2", project)
    for op in snapshot_ops(fresh, snap, t0 + timedelta(days=1)):
        section, key = op["path"].split("/")[1:3]
        fresh[section][key] = op["value"]  # type: ignore[literal-required]
    block, _ = restore_block(fresh, settings.render, "startup")
    in_force = block.split("Decisions in force:")[1]
    assert '- Store money as Decimal; supersedes "Store money as float"' in in_force
    assert "- Store money as float" not in block


def test_the_snapshot_carries_kinds_and_facts_but_no_event_counters(worktrees: tuple[Path, Path, Path], tmp_path: Path, dsn: str) -> None:
    repo, one, _ = worktrees
    home = after_session_a(tmp_path, dsn, one)
    snap = json.loads(Path(snapshot_file(home, str(repo))).read_text())
    by_id = {n["id"]: n for n in snap["nodes"]}
    assert by_id["src-app-py"]["kind"] == "file" and by_id["src-app-py"]["facts"]["path"] == "src/app.py"
    assert by_id["task-fix-rounding-in-compute-total"]["facts"]["status"] == "in_progress"
    assert by_id["pytest-tests-test-app-py-q"]["facts"]["outcome"] == "fail"
    assert not any("seq" in (n.get("facts") or {}) for n in snap["nodes"])
    assert [n["kind"] for n in snap["nodes"][:1]] == ["request"]  # the last session's request leads
