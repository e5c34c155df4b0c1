"""The reconcile write path against a real embedded PostgreSQL: one-pass weights, vectors
embedded on a second connection that commits only after the merge, and the migrations
that support both (HNSW build parameters, a deferrable vector foreign key)."""

from __future__ import annotations

import shutil
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import warm_support as ws

from rolling_graph.warm import db, embed_alongside, embeddings, merge, migrate, upsert

pytestmark = pytest.mark.db

T0 = datetime(2026, 11, 1, tzinfo=UTC)


dsn = ws.database("wp")
_lexical = ws.lexical_embedder
settings = ws.warm_settings
project = ws.project_in_tmp


reconcile = ws.reconcile


def vectors(settings, project: str) -> dict[str, tuple[str, str]]:  # type: ignore[no-untyped-def]
    with db.connect(settings) as conn:
        return {r[0]: (r[1], r[2]) for r in conn.execute(
            "SELECT e.node_id, e.content_hash, e.embedding::text FROM node_embeddings e JOIN projects p ON p.id = e.project_id "
            "WHERE p.root = %s", (project,))}


def counts(settings, project: str) -> tuple[int, int]:  # type: ignore[no-untyped-def]
    with db.connect(settings) as conn:
        row = conn.execute(
            "SELECT (SELECT count(*) FROM nodes n JOIN projects p ON p.id = n.project_id WHERE p.root = %s),"
            " (SELECT count(*) FROM node_embeddings e JOIN projects p ON p.id = e.project_id WHERE p.root = %s)",
            (project, project)).fetchone()
    return int(row[0]), int(row[1])


def three_nodes(session: str, project: str, seq: int = 1, at: datetime = T0) -> dict[str, Any]:
    nodes = [ws.node("Stripe webhooks", 0.8, at=at), ws.node("Retry queue", 0.6, at=at), ws.node("Idempotency keys", 0.4, at=at)]
    return ws.hot_doc(session, project, nodes, [("stripe-webhooks", "depends_on", "retry-queue", 0.7)], at=at, seq=seq)


def embed_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "rgraph-embed"]


def test_vectors_are_embedded_alongside_the_merge_and_match_the_serial_path(settings, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    parallel, serial = str(tmp_path / "parallel"), str(tmp_path / "serial")
    got = reconcile(settings, three_nodes("s-par", parallel))
    assert got.embedded_alongside and got.embed_fallback == ""
    assert got.embedded == 3
    alone = reconcile(settings, three_nodes("s-ser", serial), parallel_embedding=False)
    assert not alone.embedded_alongside and alone.embedded == 3
    assert vectors(settings, parallel) == vectors(settings, serial)
    assert set(vectors(settings, parallel)) == {"stripe-webhooks", "retry-queue", "idempotency-keys"}
    assert not embed_threads()


def test_no_vector_is_visible_before_the_merge_commits(settings, project, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    real = upsert.upsert_edges

    def slow_upsert_edges(*args: Any, **kwargs: Any) -> int:
        written = real(*args, **kwargs)
        time.sleep(1.5)  # the merge holds its transaction open, writes done
        return written

    monkeypatch.setattr(upsert, "upsert_edges", slow_upsert_edges)
    result: list[Any] = []
    worker = threading.Thread(target=lambda: result.append(reconcile(settings, three_nodes("s-vis", project))))
    worker.start()
    seen_open = 0
    with db.connect(settings, autocommit=True) as conn:
        deadline = time.monotonic() + 1.2
        while time.monotonic() < deadline and worker.is_alive():
            seen_open = max(seen_open, ws.open_transactions(conn))
            assert counts(settings, project) == (0, 0)  # neither the nodes nor their vectors yet
            time.sleep(0.1)
    worker.join(timeout=30)
    assert seen_open == 2, "the merge and the vector transaction should both have been open"
    assert result and result[0].embedded_alongside
    assert counts(settings, project) == (3, 3)


def test_a_merge_that_fails_leaves_neither_nodes_nor_vectors(settings, project, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    def broken(*args: Any, **kwargs: Any) -> int:
        time.sleep(0.3)  # let the vector transaction insert first
        raise RuntimeError("edge write failed")

    monkeypatch.setattr(upsert, "upsert_edges", broken)
    with pytest.raises(RuntimeError, match="edge write failed"):
        reconcile(settings, three_nodes("s-fail", project))
    assert counts(settings, project) == (0, 0)
    assert not embed_threads()


def test_without_a_second_connection_the_vectors_are_embedded_after_the_merge(settings, project, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(embed_alongside, "same_database", lambda conn: "host=/nonexistent-socket-dir port=1 connect_timeout=1")
    got = reconcile(settings, three_nodes("s-fallback", project))
    assert not got.embedded_alongside
    assert got.embed_fallback.startswith("OperationalError")
    assert got.embedded == 3 and counts(settings, project) == (3, 3)


def test_one_pass_weights_equal_a_recompute_from_the_stored_contributions(settings, project) -> None:  # type: ignore[no-untyped-def]
    reconcile(settings, three_nodes("s-a", project, at=T0))
    reconcile(settings, three_nodes("s-b", project, at=T0 + timedelta(days=1)))
    later = three_nodes("s-b", project, seq=5, at=T0 + timedelta(days=1, hours=2))  # pre-compact, then session-end
    later["nodes"]["retry-queue"]["weight"] = 0.1
    reconcile(settings, later)
    reconcile(settings, three_nodes("s-c", project, at=T0 + timedelta(days=3)))
    with db.connect(settings) as conn:
        pid = conn.execute("SELECT id FROM projects WHERE root = %s", (project,)).fetchone()[0]
        before = {r[0]: r[1:] for r in conn.execute("SELECT id, weight, session_count, activations FROM nodes WHERE project_id = %s", (pid,))}
        upsert.recompute_nodes(conn, pid, sorted(before))
        after = {r[0]: r[1:] for r in conn.execute("SELECT id, weight, session_count, activations FROM nodes WHERE project_id = %s", (pid,))}
        edge = conn.execute("SELECT strength, session_count FROM edges WHERE project_id = %s", (pid,)).fetchone()
        contributions = [merge.Contribution(*r) for r in conn.execute(
            "SELECT session_id, strength, last_activated FROM edge_sessions WHERE project_id = %s", (pid,))]
        conn.rollback()
    assert after == before
    assert before["retry-queue"][1] == 3  # s-b counted once, although reconciled twice
    assert edge[1] == 3 and edge[0] == pytest.approx(merge.edge_strength("depends_on", contributions), abs=1e-6)


def test_contributions_are_folded_at_the_precision_they_are_stored() -> None:
    assert upsert.as_real(0.1) != 0.1  # float64 0.1 is not representable in a real column
    assert upsert.as_real(upsert.as_real(0.1)) == upsert.as_real(0.1)
    assert upsert.as_real(0.5) == 0.5


def _reloptions(conn, name: str) -> list[str]:  # type: ignore[no-untyped-def]
    row = conn.execute("SELECT reloptions FROM pg_class WHERE relname = %s", (name,)).fetchone()
    return list(row[0] or []) if row else []


def test_migrations_rebuild_an_older_hnsw_index_and_make_the_vector_key_deferrable(tmp_path: Path) -> None:
    old = tmp_path / "old-migrations"
    old.mkdir()
    for path in sorted(migrate.MIGRATIONS_DIR.glob("00[12]_*.sql")):
        shutil.copy(path, old / path.name)
    import psycopg

    with psycopg.connect(ws.fresh_dsn("mig")) as conn:
        assert migrate.migrate(conn, old) == [1, 2]
        name = embeddings.index_name(embeddings.LEXICAL_MODEL, embeddings.LEXICAL_DIM)
        conn.execute(f"CREATE INDEX {name} ON node_embeddings USING hnsw ((embedding::vector(256)) vector_cosine_ops) "
                     f"WITH (m = 16, ef_construction = 40) WHERE model = '{embeddings.LEXICAL_MODEL}'")
        conn.execute("INSERT INTO embedding_models (model, dim, index_name) VALUES (%s, 256, %s)", (embeddings.LEXICAL_MODEL, name))
        conn.commit()
        assert "m=16" in _reloptions(conn, name)
        applied = migrate.migrate(conn)
        assert 3 in applied and 4 in applied
        assert _reloptions(conn, name) == [f"m={embeddings.HNSW_M}", f"ef_construction={embeddings.HNSW_EF_CONSTRUCTION}"]
        deferrable, deferred = conn.execute(
            "SELECT condeferrable, condeferred FROM pg_constraint WHERE conrelid = 'node_embeddings'::regclass "
            "AND confrelid = 'nodes'::regclass AND contype = 'f'").fetchone()
        assert deferrable and not deferred  # deferred only where a transaction asks for it
        conn.rollback()


def test_new_indexes_are_built_with_the_current_parameters(settings, project) -> None:  # type: ignore[no-untyped-def]
    reconcile(settings, three_nodes("s-idx", project))
    with db.connect(settings) as conn:
        name = embeddings.index_name(embeddings.LEXICAL_MODEL, embeddings.LEXICAL_DIM)
        assert _reloptions(conn, name) == [f"m={embeddings.HNSW_M}", f"ef_construction={embeddings.HNSW_EF_CONSTRUCTION}"]


def test_concurrent_reconciles_and_a_reembed_of_one_project_all_finish(settings, project) -> None:  # type: ignore[no-untyped-def]
    """Four sessions with overlapping nodes reconcile at once while ``reembed`` rewrites
    every vector of the project: every wait is one PostgreSQL can see, so nothing hangs,
    every session counts once and every node ends with exactly one vector."""
    shared = [f"Shared topic {k}" for k in range(30)]
    docs = [ws.hot_doc(f"many-{i}", project, [ws.node(label, 0.3 + 0.1 * i, at=T0 + timedelta(hours=i)) for label in shared]
                       + [ws.node(f"Own topic {i} {k}", 0.5, at=T0) for k in range(10)], at=T0 + timedelta(hours=i))
            for i in range(4)]
    reconcile(settings, docs[0])  # the project exists, so reembed has vectors to rewrite
    errors: list[BaseException] = []

    def run(job: Any) -> None:
        try:
            job()
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    def reembed() -> None:
        with db.connect(settings) as conn:
            pid = conn.execute("SELECT id FROM projects WHERE root = %s", (project,)).fetchone()[0]
            with conn.transaction():
                embeddings.reembed(conn, embeddings.LexicalEmbedder(), pid)

    jobs = [lambda d=d: reconcile(settings, d) for d in docs[1:]] + [reembed]
    threads = [threading.Thread(target=run, args=(job,)) for job in jobs]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not any(t.is_alive() for t in threads), "a reconcile or the reembed hung"
    assert not errors
    with db.connect(settings) as conn:
        pid = conn.execute("SELECT id FROM projects WHERE root = %s", (project,)).fetchone()[0]
        sessions = dict(conn.execute("SELECT id, session_count FROM nodes WHERE project_id = %s", (pid,)).fetchall())
        per_node = conn.execute("SELECT count(*), count(DISTINCT node_id) FROM node_embeddings WHERE project_id = %s", (pid,)).fetchone()
    assert all(sessions[f"shared-topic-{k}"] == 4 for k in range(30))
    assert len(sessions) == 30 + 40
    assert per_node == (70, 70)
