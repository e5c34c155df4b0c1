"""Shared helpers for the warm-graph tests: one embedded PostgreSQL per test process,
a fresh database per test module, and small builders for hot sidecar documents."""

from __future__ import annotations

import atexit
import functools
import json
import os
import shutil
import tempfile
import uuid
from datetime import datetime
from pathlib import Path
from typing import Any

import psycopg
import pytest

from rolling_graph.core.clock import iso
from rolling_graph.core.config import Settings
from rolling_graph.core.ids import edge_key
from rolling_graph.core.model import make_edge, make_node, new_document
from rolling_graph.warm import server


@functools.cache
def pg_home() -> Path:
    """Start (once per process) an embedded server in a short temp dir; stopped at exit."""
    home = Path(tempfile.mkdtemp(prefix=f"rgpg-{os.getpid()}-", dir="/tmp"))
    server.ensure_running(home)

    def _stop() -> None:
        server.stop(home)
        shutil.rmtree(home, ignore_errors=True)

    atexit.register(_stop)
    return home


def stop_shared_server() -> None:
    """Stop the shared test server now (the suite's end checks that none is left running)."""
    if pg_home.cache_info().currsize:
        home = pg_home()
        server.stop(home)
        shutil.rmtree(home, ignore_errors=True)
        pg_home.cache_clear()


def fresh_dsn(prefix: str = "t") -> str:
    """A new, empty database on the shared test server."""
    info = server.running_info(pg_home())
    assert info is not None
    name = f"{prefix}_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(server.dsn_for(info, "postgres"), autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return server.dsn_for(info, name)


def settings_for(home: Path, dsn: str | None) -> Settings:
    return Settings(home=home, dsn=dsn, embedder="lexical")  # no Ollama here


# -- fixtures a warm test module binds to its own names, e.g. ``dsn = ws.database("rec")`` --
def database(prefix: str) -> Any:
    """A module-scoped ``dsn`` fixture: one fresh database per test module."""

    @pytest.fixture(scope="module")
    def dsn() -> str:
        pg_home()
        return fresh_dsn(prefix)

    return dsn


@pytest.fixture(autouse=True)
def lexical_embedder(monkeypatch: pytest.MonkeyPatch) -> None:
    """Embed with the offline lexical model (no Ollama here)."""
    monkeypatch.setenv("ROLLING_GRAPH_EMBEDDER", "lexical")


@pytest.fixture
def warm_settings(tmp_path: Path, dsn: str) -> Settings:
    return settings_for(tmp_path, dsn)


@pytest.fixture
def project_in_tmp(tmp_path: Path) -> str:
    """A fresh project per test isolates it inside the module's database."""
    return str(tmp_path / "proj")


def node(label: str, weight: float = 0.5, *, at: datetime, domain: str = "technical", kind: str = "concept", **kw: Any) -> dict[str, Any]:
    return dict(make_node(label, domain, kind, weight=weight, now=at, **kw))


def hot_doc(
    session_id: str,
    project: str,
    nodes: list[dict[str, Any]],
    edges: list[tuple[str, str, str, float]] = (),  # type: ignore[assignment]
    *,
    at: datetime,
    seq: int = 1,
    focus: list[str] | None = None,
) -> dict[str, Any]:
    doc = new_document(session_id, project, now=at)
    doc["nodes"] = {n["id"]: n for n in nodes}
    doc["edges"] = {edge_key(s, r, t): dict(make_edge(s, r, t, st, now=at)) for s, r, t, st in edges}
    doc["focus"] = focus or []
    doc["journal_seq"] = seq
    doc["updated_at"] = iso(at)
    return doc


def reconcile(settings: Settings, doc: dict[str, Any], trigger: str = "session-end", **kw: Any) -> Any:
    """Reconcile ``doc`` on a connection of its own (``kw``: :func:`reconcile_doc` options)."""
    from rolling_graph.warm import db
    from rolling_graph.warm.reconcile import reconcile_doc

    with db.connect(settings) as conn:
        return reconcile_doc(conn, settings, doc, trigger, **kw)


def rows(settings: Settings, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    from rolling_graph.warm import db

    with db.connect(settings) as conn:
        return conn.execute(sql, params).fetchall()


def pid_of(settings: Settings, project: str) -> int:
    return int(rows(settings, "SELECT id FROM projects WHERE root = %s", project)[0][0])


def open_transactions(conn: Any) -> int:
    """Other backends of this database holding a transaction open: idle in it, or waiting
    on an advisory lock (the vectors inserted alongside a merge wait for it that way)."""
    row = conn.execute(
        "SELECT count(*) FILTER (WHERE state = 'idle in transaction'),"
        " count(*) FILTER (WHERE wait_event_type = 'Lock' AND wait_event = 'advisory') "
        "FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()").fetchone()
    return int(row[0]) + int(row[1])


def write_sidecar(home: Path, doc: dict[str, Any]) -> Path:
    path = home / "sessions" / f"{doc['session_id']}.graph.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path
