"""Shared helpers for the warm-graph tests: one embedded PostgreSQL per test process,
a fresh database per test module, and small builders for hot sidecar documents."""

from __future__ import annotations

import atexit
import functools
import json
import shutil
import tempfile
import uuid
from datetime import datetime
from pathlib import Path
from typing import Any

import psycopg

from reconcile import server
from rolling_graph.config import Settings
from rolling_graph.model import edge_key, iso, make_edge, make_node, new_document


@functools.cache
def pg_home() -> Path:
    """Start (once per process) an embedded server in a short temp dir; stopped at exit."""
    home = Path(tempfile.mkdtemp(prefix="rgpg-", dir="/tmp"))
    server.ensure_running(home)

    def _stop() -> None:
        server.stop(home)
        shutil.rmtree(home, ignore_errors=True)

    atexit.register(_stop)
    return home


def fresh_dsn(prefix: str = "t") -> str:
    """A new, empty database on the shared test server."""
    info = server.running_info(pg_home())
    assert info is not None
    name = f"{prefix}_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(server.dsn_for(info, "postgres"), autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return server.dsn_for(info, name)


def settings_for(home: Path, dsn: str | None) -> Settings:
    return Settings(home=home, dsn=dsn)


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


def write_sidecar(home: Path, doc: dict[str, Any]) -> Path:
    path = home / "sessions" / f"{doc['session_id']}.graph.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path
