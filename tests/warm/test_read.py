"""Reading the warm graph back for `rgraph show --warm` (real embedded PostgreSQL)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
import typer
import warm_support as ws
from typer.testing import CliRunner

from rolling_graph.warm import db
from rolling_graph.warm.read import warm_document
from rolling_graph.warm.reconcile import reconcile_doc

pytestmark = pytest.mark.db
T0 = datetime(2026, 11, 1, tzinfo=UTC)


dsn = ws.database("read")


@pytest.fixture
def settings(tmp_path: Path, dsn: str, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    monkeypatch.setenv("ROLLING_GRAPH_EMBEDDER", "lexical")
    monkeypatch.setenv("ROLLING_GRAPH_HOME", str(tmp_path))
    monkeypatch.setenv("ROLLING_GRAPH_DSN", dsn)
    return ws.settings_for(tmp_path, dsn)


def test_the_warm_graph_reads_back_as_a_sidecar_shaped_document(settings, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    project = str(tmp_path / "proj")
    doc = ws.hot_doc("s1", project, [ws.node("Use PostgreSQL", 0.8, at=T0, kind="decision"), ws.node("Use SQLite", 0.3, at=T0, kind="decision")],
                     [("use-postgresql", "supersedes", "use-sqlite", 0.9)], at=T0, focus=["use-postgresql"])
    with db.connect(settings) as conn:
        reconcile_doc(conn, settings, doc, "session-end")
    warm = warm_document(settings, project)
    assert warm["project"] == project and warm["session_id"] == "warm"
    assert warm["nodes"]["use-postgresql"]["kind"] == "decision"
    assert warm["nodes"]["use-postgresql"]["sessions"] == 1
    assert "use-postgresql|supersedes|use-sqlite" in warm["edges"]
    assert warm["focus"] == ["use-postgresql"]


def test_a_project_never_reconciled_says_so(settings, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(LookupError, match="no warm graph yet"):
        warm_document(settings, str(tmp_path / "never"))


def test_rgraph_show_warm_prints_the_projects_warm_graph(settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    project = tmp_path / "proj2"
    project.mkdir()
    doc = ws.hot_doc("s2", str(project), [ws.node("Use Redis streams", 0.9, at=T0, kind="decision")], at=T0)
    with db.connect(settings) as conn:
        reconcile_doc(conn, settings, doc, "session-end")
    from rolling_graph.cli import show

    app = typer.Typer()
    show.register(app)
    monkeypatch.chdir(project)
    result = CliRunner().invoke(app, ["show", "--warm"])
    assert result.exit_code == 0, result.output
    assert "Use Redis streams" in result.output and "Warm graph" in result.output
