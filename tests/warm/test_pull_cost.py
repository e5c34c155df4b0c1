"""The first prompt's pull: skipped only when it cannot add anything, and light when it runs.

Skipped when the session took a snapshot that holds the project's whole warm graph, and that
snapshot is still the warm graph's latest word. Everything else (another session reconciled
since, a snapshot short of the warm graph, a merge that died before it rewrote the snapshot, a
corrupt or replaced file) pulls. When it runs, it loads neither ``httpx`` without an Ollama to
ask nor the worker's other commands, and redacts fully only what leaves the process.

The real embedded PostgreSQL throughout; each "it would have added something" is checked
against the real pull (:func:`rolling_graph.warm.pull.pull_ops`)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import warm_support as ws
from conftest import prompt_payload

from rolling_graph import hook
from rolling_graph.core import detach
from rolling_graph.core.config import Settings, load_settings
from rolling_graph.warm import db, embeddings, pull, snapshot, snapshot_files

dsn = ws.database("whole")
_lexical = ws.lexical_embedder
settings = ws.warm_settings
project = ws.project_in_tmp

T0 = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)


def snapshot_ids(settings: Settings, project: str) -> set[str]:
    snap = snapshot.read_snapshot(settings.home, project)
    assert snap is not None
    return {n["id"] for n in snap["nodes"]}


def pulled(settings: Settings, doc: dict[str, Any], prompt: str) -> set[str]:
    """The node ids the real pull would add to ``doc`` for ``prompt``."""
    with db.connect(settings) as conn:
        ops = pull.pull_ops(conn, doc, prompt, embedder=embeddings.LexicalEmbedder(), now=T0 + timedelta(days=1))
    return {op["path"].split("/")[2] for op in ops if op["path"].startswith("/nodes/")}


def first_session(settings: Settings, project: str) -> set[str]:
    ws.reconcile(settings, ws.hot_doc("s1", project, [ws.node("Billing proration", 0.8, at=T0), ws.node("Webhook retries", 0.6, at=T0)],
                                      [("billing-proration", "relates_to", "webhook-retries", 0.7)], at=T0, focus=["billing-proration"]))
    return snapshot_ids(settings, project)


def test_a_session_holding_the_whole_warm_graph_skips_the_pull(settings: Settings, project: str) -> None:
    ids = first_session(settings, project)
    assert ids == {"billing-proration", "webhook-retries"}
    assert snapshot.holds_whole_project(settings.home, project, ids)
    held = ws.hot_doc("s2", project, [ws.node("Billing proration", 0.8, at=T0), ws.node("Webhook retries", 0.6, at=T0)], at=T0)
    assert pulled(settings, held, "billing proration webhook retries") == set(), "the real pull agrees: nothing to add"
    assert not snapshot.holds_whole_project(settings.home, project, {"billing-proration"}), "a node the session lacks"
    assert not snapshot.holds_whole_project(settings.home, str(Path(project).parent / "elsewhere"), ids), "another project"


def test_another_sessions_reconcile_since_brings_the_pull_back(settings: Settings, project: str) -> None:
    ids = first_session(settings, project)  # what a session took at its start
    ws.reconcile(settings, ws.hot_doc("s3", project, [ws.node("Invoice proration rounding", 0.7, at=T0)], at=T0))
    assert not snapshot.holds_whole_project(settings.home, project, ids)
    doc = ws.hot_doc("s2", project, [ws.node("Billing proration", 0.8, at=T0), ws.node("Webhook retries", 0.6, at=T0)], at=T0)
    assert "invoice-proration-rounding" in pulled(settings, doc, "invoice proration rounding")


def test_a_snapshot_short_of_the_warm_graph_claims_nothing(settings: Settings, project: str) -> None:
    # The snapshot names only the last session's requests: the first session's stays in the warm graph alone.
    ws.reconcile(settings, ws.hot_doc("r1", project, [ws.node("Explain the retry queue backoff", 0.6, at=T0, kind="request")], at=T0))
    later = T0 + timedelta(hours=2)
    ws.reconcile(settings, ws.hot_doc("r2", project, [ws.node("Add a schema for invoices", 0.6, at=later, kind="request")], at=later))
    ids = snapshot_ids(settings, project)
    assert "explain-the-retry-queue-backoff" not in ids
    snap = snapshot.read_snapshot(settings.home, project)
    assert snap is not None and snap["whole"] is False
    assert not Path(snapshot.whole_file(settings.home, project)).exists()
    assert not snapshot.holds_whole_project(settings.home, project, ids)
    doc = ws.hot_doc("r3", project, [ws.node("Add a schema for invoices", 0.6, at=later, kind="request")], at=later)
    assert "explain-the-retry-queue-backoff" in pulled(settings, doc, "explain the retry queue backoff")


def test_a_merge_that_died_before_rewriting_the_snapshot_withdrew_the_claim(settings: Settings, project: str) -> None:
    ids = first_session(settings, project)
    assert snapshot.holds_whole_project(settings.home, project, ids)
    # The merge commits; its snapshot is never written (the worker killed in between).
    ws.reconcile(settings, ws.hot_doc("s4", project, [ws.node("Ledger export", 0.7, at=T0)], at=T0), write_snapshot=False)
    assert snapshot_ids(settings, project) == ids, "the old snapshot is still in place"
    assert not snapshot.holds_whole_project(settings.home, project, ids)


def test_a_corrupt_or_replaced_snapshot_or_claim_claims_nothing(settings: Settings, project: str) -> None:
    ids = first_session(settings, project)
    path = Path(snapshot_files.snapshot_file(settings.home, project))
    claim = Path(snapshot.whole_file(settings.home, project))
    good_snapshot, good_claim = path.read_bytes(), claim.read_bytes()
    claim.write_bytes(b"{not json")
    assert not snapshot.holds_whole_project(settings.home, project, ids)
    claim.write_bytes(good_claim)
    assert snapshot.holds_whole_project(settings.home, project, ids)
    replaced = path.with_suffix(".new")
    replaced.write_bytes(good_snapshot)  # a valid snapshot, but not the file the claim was made for
    replaced.replace(path)
    assert not snapshot.holds_whole_project(settings.home, project, ids)
    path.write_bytes(good_snapshot[:-20])  # torn: another file than the claim names, and not JSON
    assert not snapshot.holds_whole_project(settings.home, project, ids)
    path.unlink()
    assert not snapshot.holds_whole_project(settings.home, project, ids)


# -- the hook: the first prompt starts the pull, or does not ---------------------------------------------
@pytest.fixture
def hook_settings(isolated_home: Path, dsn: str, monkeypatch: pytest.MonkeyPatch) -> Settings:
    monkeypatch.setenv("ROLLING_GRAPH_WARM", "on")
    monkeypatch.setenv("ROLLING_GRAPH_DSN", dsn)
    monkeypatch.setattr(detach, "defer", True)  # starts are queued, not run: the test reads the queue
    monkeypatch.setattr(detach, "_DEFERRED", [])
    return load_settings()


def pulls_started() -> list[list[str]]:
    return [args for _, args, _, _ in detach._DEFERRED if args[:1] == ["pull"]]


def start_and_prompt(sid: str, cwd: str, prompt: str, between: Any = None) -> list[list[str]]:
    hook.handle_event("session-start", {**prompt_payload(sid, "", cwd=cwd), "hook_event_name": "SessionStart", "source": "startup"})
    if between is not None:
        between()
    detach._DEFERRED.clear()
    hook.handle_event("user-prompt-submit", prompt_payload(sid, prompt, cwd=cwd))
    return pulls_started()


def test_the_first_prompt_pulls_only_when_the_warm_graph_has_more(hook_settings: Settings, tmp_path: Path) -> None:
    cwd = tmp_path / "app"
    cwd.mkdir()
    project = str(cwd)
    first_session(hook_settings, project)
    assert start_and_prompt("h1", project, "Look at the billing proration again") == [], "it took the whole warm graph at its start"

    def another_session_reconciles() -> None:
        ws.reconcile(hook_settings, ws.hot_doc("h9", project, [ws.node("Invoice proration rounding", 0.7, at=T0)], at=T0))

    started = start_and_prompt("h2", project, "Look at invoice proration rounding", between=another_session_reconciles)
    assert [args[:3] for args in started] == [["pull", "--session", "h2"]]


# -- a lighter pull: what it loads and redacts --------------------------------------------------------
class Recording(embeddings.LexicalEmbedder):
    """The lexical model, recording what it is given (``local`` as the test sets it)."""

    seen: list[str]

    def embed(self, texts: Any) -> list[list[float]]:
        self.seen = [*getattr(self, "seen", []), *texts]
        return super().embed(texts)


class SentOut(Recording):
    local = False  # as if the texts went to a service (Ollama)


@pytest.mark.parametrize(("embedder", "secret_kept"), [(SentOut(), False), (Recording(), True)])
def test_the_prompt_is_fully_redacted_before_it_leaves_the_process(settings: Settings, project: str, embedder: Recording,
                                                                   secret_kept: bool) -> None:
    first_session(settings, project)
    prompt = "billing proration: db_pass: s3cr3t-P4ss"  # the hook's fast redaction leaves this one to the library
    with db.connect(settings) as conn:
        pull.pull_ops(conn, ws.hot_doc("p1", project, [], at=T0), prompt, embedder=embedder, now=T0)
    assert len(embedder.seen) == 1
    assert ("s3cr3t-P4ss" in embedder.seen[0]) is secret_kept
    assert "billing proration" in embedder.seen[0]


def test_without_ollama_listening_the_embedder_is_lexical_and_httpx_is_never_loaded(tmp_path: Path) -> None:
    import socket
    import subprocess
    import sys

    with socket.socket() as probe:  # a port nothing listens on once this closes
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    code = (
        "import sys\n"
        "from rolling_graph.core.config import Settings, ProbeSettings\n"
        "from rolling_graph.warm.embeddings import get_embedder\n"
        f"e = get_embedder(Settings(home={str(tmp_path)!r}, probe=ProbeSettings(ollama_host='http://127.0.0.1:{port}')), 'auto')\n"
        "print(type(e).__name__, 'httpx' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60).stdout.split()
    assert out == ["LexicalEmbedder", "False"]


def test_the_worker_loads_a_commands_modules_only_when_it_runs_it() -> None:
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from rolling_graph import worker\n"
        "print(sorted(m for m in sys.modules if m.startswith(('rolling_graph.probe', 'rolling_graph.replay', "
        "'rolling_graph.warm.reconcile', 'psycopg'))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60).stdout.strip()
    assert out == "[]"
