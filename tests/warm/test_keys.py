"""Migration 005 on warm data written before stable keys: file nodes stored under absolute
paths are re-keyed to their path relative to the project's root, and merged into the node
that a later session wrote under that relative key (contributions, edges, vectors and
graduation rows follow); what cannot be re-keyed stays as it was."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest
import warm_support as ws

from rolling_graph.core.filepaths import file_id
from rolling_graph.core.ids import slugify
from rolling_graph.warm import migrate

pytestmark = pytest.mark.db

T0 = datetime(2026, 10, 1, tzinfo=UTC)
T1 = T0 + timedelta(days=3)
ROOT = "/home/ada/src/app"
LONG = "lib/app_web/controllers/admin/reports/quarterly/revenue_breakdown_controller_helpers.ex"


def before_005(tmp_path: Path) -> Path:
    """The migrations as they were before this one."""
    older = tmp_path / "migrations"
    older.mkdir()
    for path in migrate.MIGRATIONS_DIR.glob("*.sql"):
        if not path.name.startswith("005_"):
            shutil.copy(path, older / path.name)
    return older


def node(conn: Any, pid: int, nid: str, label: str, weight: float, acts: int, at: datetime, kind: str = "file") -> None:
    conn.execute(
        "INSERT INTO nodes (project_id, id, label, domain, kind, weight, first_seen, last_activated, activations, session_count) "
        "VALUES (%s, %s, %s, 'technical', %s, %s, %s, %s, %s, 1)",
        (pid, nid, label, kind, weight, at, at, acts),
    )


def contribution(conn: Any, pid: int, nid: str, sid: str, weight: float, acts: int, at: datetime) -> None:
    conn.execute(
        "INSERT INTO node_sessions (project_id, node_id, session_id, weight, activations, first_seen, last_activated, sources, journal_seq) "
        "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, 5)",
        (pid, nid, sid, weight, acts, at, at, [f"{sid}#e1"]),
    )


@pytest.fixture
def old_shape(tmp_path: Path) -> tuple[str, dict[str, str]]:
    """A database at migration 004+010 holding one project's warm graph in the old shape."""
    dsn = ws.fresh_dsn("mig5")
    ids = {
        "abs": slugify(f"{ROOT}/lib/billing.py"),  # session 1 wrote it absolute
        "rel": "lib-billing-py",  # session 2 wrote the same file relative
        "only_abs": slugify(f"{ROOT}/lib/invoice.py"),
        "long": slugify(LONG),  # a relative path whose id was cut at 64 characters
        "cut": "cut-file-node",
        "outside": slugify("/etc/hosts.conf"),
    }
    with psycopg.connect(dsn) as conn:
        migrate.migrate(conn, before_005(tmp_path))
        pid = conn.execute("INSERT INTO projects (root, key) VALUES (%s, 'app-x') RETURNING id", (ROOT,)).fetchone()[0]
        node(conn, pid, ids["abs"], f"{ROOT}/lib/billing.py", 0.7, 3, T0)
        node(conn, pid, ids["rel"], "lib/billing.py", 0.5, 2, T1)
        node(conn, pid, ids["only_abs"], f"{ROOT}/lib/invoice.py", 0.4, 1, T0)
        node(conn, pid, ids["long"], LONG, 0.3, 1, T0)
        node(conn, pid, ids["cut"], "…ers/admin/reports/quarterly/x.ex", 0.3, 1, T0)
        node(conn, pid, ids["outside"], "/etc/hosts.conf", 0.3, 1, T0)
        node(conn, pid, "use-decimal", "Use Decimal for money", 0.8, 2, T0, kind="decision")
        contribution(conn, pid, ids["abs"], "s1", 0.7, 3, T0)
        contribution(conn, pid, ids["rel"], "s2", 0.5, 2, T1)
        contribution(conn, pid, ids["only_abs"], "s1", 0.4, 1, T0)
        contribution(conn, pid, "use-decimal", "s1", 0.8, 2, T0)
        for target in (ids["abs"], ids["rel"]):
            conn.execute("INSERT INTO edges (project_id, source, relationship, target, strength, first_seen, last_activated, session_count) "
                         "VALUES (%s, 'use-decimal', 'depends_on', %s, %s, %s, %s, 1)", (pid, target, 0.6 if target == ids["abs"] else 0.4, T0, T0))
        conn.execute("INSERT INTO edge_sessions (project_id, source, relationship, target, session_id, strength, last_activated, journal_seq) "
                     "VALUES (%s, 'use-decimal', 'depends_on', %s, 's1', 0.6, %s, 5)", (pid, ids["abs"], T0))
        conn.execute("INSERT INTO node_embeddings (project_id, node_id, model, dim, content_hash, embedding) "
                     "VALUES (%s, %s, 'test-model', 2, 'h', '[1,0]')", (pid, ids["only_abs"]))
        conn.execute("INSERT INTO graduation_drafts (project_id, node_id, kind, content, node_hash, backend, created_at) "
                     "VALUES (%s, %s, 'note', 'invoice.py holds the invoice model', 'h', 'test', %s)", (pid, ids["only_abs"], T1))
        conn.commit()
    return dsn, ids


def test_absolute_file_nodes_are_rekeyed_to_relative_paths_and_merged(old_shape: tuple[str, dict[str, str]]) -> None:
    dsn, ids = old_shape
    with psycopg.connect(dsn) as conn:
        assert migrate.migrate(conn) == [5]
        nodes = {r[0]: r[1:] for r in conn.execute(
            "SELECT id, label, weight, activations, session_count, facts, first_seen, last_activated FROM nodes")}
        merged = nodes["lib-billing-py"]
        assert ids["abs"] not in nodes and ids["only_abs"] not in nodes
        assert merged[0] == "lib/billing.py"
        assert merged[1] == pytest.approx(0.7)  # the larger weight until a reconcile recomputes it
        assert merged[2:4] == (5, 2)  # activations added up, both sessions counted
        assert merged[4] == {"path": "lib/billing.py"}
        assert (merged[5], merged[6]) == (T0, T1)
        sessions = dict(conn.execute("SELECT session_id, activations FROM node_sessions WHERE node_id = 'lib-billing-py'").fetchall())
        assert sessions == {"s1": 3, "s2": 2}
        edges = conn.execute("SELECT target, strength, session_count FROM edges WHERE source = 'use-decimal'").fetchall()
        assert [(t, round(s, 2), c) for t, s, c in edges] == [("lib-billing-py", 0.6, 1)]  # two edges became one, the stronger
        assert conn.execute("SELECT target FROM edge_sessions").fetchall() == [("lib-billing-py",)]
        # A file only ever stored absolute moves with its vector and its graduation draft.
        assert nodes["lib-invoice-py"][0] == "lib/invoice.py"
        assert conn.execute("SELECT node_id FROM node_embeddings").fetchall() == [("lib-invoice-py",)]
        assert conn.execute("SELECT node_id FROM graduation_drafts").fetchall() == [("lib-invoice-py",)]
        # A relative path whose id was cut at 64 characters gets the id the hot graph now gives it.
        assert file_id(LONG) in nodes and ids["long"] not in nodes and file_id(LONG) != ids["long"]
        # What cannot be re-keyed stays: a label cut to its tail, a path outside the project.
        assert ids["cut"] in nodes and ids["outside"] in nodes
        assert migrate.migrate(conn) == []


def test_the_migration_computes_file_ids_as_the_hot_graph_does(old_shape: tuple[str, dict[str, str]]) -> None:
    dsn, _ = old_shape
    paths = ["src/app.py", "lib/Spotter_Web/live/Session.Live.ex", LONG, "a/" * 40 + "deep.rs", "docs/Über Notes.md", "x", "--", "ü/ß.py"]
    with psycopg.connect(dsn) as conn:
        migrate.migrate(conn)
        got = [conn.execute("SELECT rg_file_id(%s)", (p,)).fetchone()[0] for p in paths]
    assert got == [file_id(p) for p in paths]
