"""Builders for the graduation tests: sessions written as hot sidecars (SidecarStore.apply_ops,
so journals exist for provenance) and reconciled into a real warm graph."""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import Any

import warm_support as ws

from rolling_graph.core.config import Settings
from rolling_graph.core.ids import edge_key
from rolling_graph.core.model import make_edge
from rolling_graph.store.project import project_root
from rolling_graph.store.sidecar import SidecarStore
from rolling_graph.warm import db, embeddings

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures" / "graduation"
LEXICAL = embeddings.LexicalEmbedder()

Edge = tuple[str, str, str, float]


def project_dir(tmp_path: Path, name: str = "proj") -> tuple[Path, str]:
    """A project directory and its root as the warm graph keys it."""
    path = tmp_path / name
    path.mkdir(parents=True, exist_ok=True)
    return path, project_root(str(path))


def write_session(
    settings: Settings, sid: str, project: str, nodes: list[dict[str, Any]], edges: Iterable[Edge] = (), *,
    at: datetime, rationale: str = "the user settled the storage question",
) -> dict[str, Any]:
    """A hot session: an init entry carrying the project, then one journaled patch."""
    store = SidecarStore(settings)
    with store.transaction(sid) as doc:
        if not doc.get("journal_seq"):
            doc["project"] = project
            store.commit_entry(doc, {"kind": "init", "rationale": "session started", "ops": [], "reasons": [], "project": project})
    ops: list[dict[str, Any]] = [{"op": "add", "path": f"/nodes/{n['id']}", "value": n} for n in nodes]
    ops += [{"op": "add", "path": f"/edges/{edge_key(s, r, t)}", "value": dict(make_edge(s, r, t, st, now=at))} for s, r, t, st in edges]
    store.apply_ops(sid, ops, kind="patch", rationale=rationale, event_id=f"{sid}-e1", backend="offline")
    return store.load(sid)


def reconcile(settings: Settings, doc: dict[str, Any]) -> None:
    ws.reconcile(settings, doc, embedder=LEXICAL)


def storage_session(
    settings: Settings, sid: str, project: str, at: datetime, *, label: str = "Use PostgreSQL for the warm store",
    summary: str | None = None, weight: float = 0.9,
) -> None:
    """The decision that graduates: PostgreSQL supersedes SQLite and informs the warm store."""
    nodes = [
        ws.node(label, weight, at=at, kind="decision", node_id="use-postgresql", summary=summary),
        ws.node("Use SQLite for the warm store", 0.3, at=at, kind="decision"),
        ws.node("Warm graph store", 0.6, at=at, kind="concept"),
    ]
    edges = [("use-postgresql", "supersedes", "use-sqlite-for-the-warm-store", 0.9),
             ("use-postgresql", "informs", "warm-graph-store", 0.7)]
    reconcile(settings, write_session(settings, sid, project, nodes, edges, at=at))


rows = ws.rows
pid_of = ws.pid_of


def execute(settings: Settings, sql: str, *params: Any) -> None:
    with db.connect(settings) as conn:
        conn.execute(sql, params)


def envelope(name: str) -> dict[str, Any]:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def anthropic_client(reply: dict[str, Any]) -> tuple[Any, Any]:
    """The real SDK client answered by a recorded Messages API response (no network)."""
    import anthropic
    from probe_support import Server, sdk_httpx

    http = sdk_httpx()
    server = Server(http, [reply])
    client = anthropic.Anthropic(
        api_key="sk-ant-api03-test-key-not-real", base_url="http://anthropic.invalid",
        http_client=http.Client(transport=server.transport()), max_retries=0,
    )
    return client, server
