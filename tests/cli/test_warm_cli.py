"""The warm graph's user-facing entry points: `rgraph reconcile|recover|db|reembed`, the
detached worker's pull, and doctor checks."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
import typer
import warm_support as ws
from typer.testing import CliRunner

from rolling_graph.cli import warm as cli
from rolling_graph.cli.console import Group
from rolling_graph.replay import recover
from rolling_graph.store import journal
from rolling_graph.store.sidecar import SidecarStore
from rolling_graph.warm import pull

pytestmark = pytest.mark.db

T0 = datetime(2026, 11, 1, tzinfo=UTC)


dsn = ws.database("cli")


@pytest.fixture
def env(tmp_path: Path, dsn: str, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ROLLING_GRAPH_HOME", str(tmp_path))
    monkeypatch.setenv("ROLLING_GRAPH_DSN", dsn)
    monkeypatch.setenv("ROLLING_GRAPH_EMBEDDER", "lexical")
    return tmp_path


def app() -> typer.Typer:
    a = typer.Typer(cls=Group)  # the CLI's one error handler, as in `rgraph`

    @a.command("noop")
    def _noop() -> None:  # a second command keeps typer in multi-command mode
        pass

    cli.register(a)
    return a


def test_reconcile_command_reports_counts_then_up_to_date(env: Path) -> None:
    ws.write_sidecar(env, ws.hot_doc("cli-1", str(env / "proj"), [ws.node("CLI node", 0.5, at=T0)], at=T0, seq=2))
    runner = CliRunner()
    first = runner.invoke(app(), ["reconcile", "--session", "cli-1"])
    second = runner.invoke(app(), ["reconcile", "--all"])
    assert first.exit_code == 0, first.output
    assert "1 nodes (1 new)" in first.output
    assert "already up to date" in second.output


def test_db_status_and_recover_commands(env: Path) -> None:
    runner = CliRunner()
    status = runner.invoke(app(), ["db", "status"])
    assert status.exit_code == 0 and "kind: external" in status.output and "ok: True" in status.output
    result = runner.invoke(app(), ["recover", "--quick"])
    assert result.exit_code == 0 and "still queued" in result.output


def test_reembed_command_uses_one_model(env: Path) -> None:
    ws.write_sidecar(env, ws.hot_doc("cli-2", str(env / "proj2"), [ws.node("Reembed me", 0.5, at=T0)], at=T0))
    runner = CliRunner()
    assert runner.invoke(app(), ["reconcile", "--session", "cli-2"]).exit_code == 0
    out = runner.invoke(app(), ["reembed", "--model", "lexical"])
    assert out.exit_code == 0 and "lexical-hash-v1 (256-d)" in out.output


def test_unreachable_database_is_queued_by_the_cli_and_shown_by_doctor(env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ROLLING_GRAPH_DSN", "postgresql://postgres@127.0.0.1:9/x?connect_timeout=2")
    ws.write_sidecar(env, ws.hot_doc("cli-3", str(env / "proj3"), [ws.node("Later", 0.5, at=T0)], at=T0))
    out = CliRunner().invoke(app(), ["reconcile", "--session", "cli-3"])
    assert out.exit_code == 1 and "rgraph recover" in out.output
    from rolling_graph.core.config import load_settings

    checks = {name: (ok, detail) for name, ok, detail in cli.doctor_report(load_settings())}
    assert checks["warm database"][0] is False
    assert checks["reconcile queue"][1].startswith("1 pending")
    assert len(recover.pending(load_settings())) == 1


def test_prompt_pull_merges_warm_nodes_into_the_hot_graph_journaled(env: Path) -> None:
    from rolling_graph.core.config import load_settings

    settings = load_settings()
    project = str(env / "proj4")
    ws.write_sidecar(env, ws.hot_doc("old-session", project, [ws.node("Flaky migration test", 0.6, at=T0),
                                                             ws.node("Advisory lock", 0.5, at=T0)],
                                     [("advisory-lock", "informs", "flaky-migration-test", 0.6)], at=T0))
    assert CliRunner().invoke(app(), ["reconcile", "--session", "old-session"]).exit_code == 0
    store = SidecarStore(settings)
    with store.transaction("new-session") as doc:
        doc["project"] = project
    added = pull.run_pull(settings, "new-session", "the flaky migration test again")
    hot = store.load("new-session")
    assert added >= 1
    assert hot["nodes"]["flaky-migration-test"]["pulled"] is True
    assert hot["nodes"]["flaky-migration-test"]["origin"] == "warm"
    kinds = [e["kind"] for e in journal.read_journal(store.journal_path("new-session"))]
    assert "pull" in kinds
    pull.run_pull(settings, "new-session", "the flaky migration test again")  # may add focus neighbours
    assert pull.run_pull(settings, "new-session", "the flaky migration test again") == 0  # nothing left to add
    assert set(store.load("new-session")["nodes"]) == {"flaky-migration-test", "advisory-lock"}
