"""The warm graph against a real embedded PostgreSQL: migrations, reconciliation, resume."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import warm_support as ws
from psycopg.sql import SQL as psycopg_sql  # noqa: N811

from rolling_graph.warm import db, embeddings, migrate, pull, rank, resume, snapshot

pytestmark = pytest.mark.db

T0 = datetime(2026, 11, 1, tzinfo=UTC)


dsn = ws.database("rec")
_lexical = ws.lexical_embedder
settings = ws.warm_settings
project = ws.project_in_tmp


rows = ws.rows
reconcile = ws.reconcile


def warm_nodes(settings, project: str) -> dict[str, tuple]:  # type: ignore[no-untyped-def]
    return {
        r[0]: r[1:]
        for r in rows(settings, "SELECT n.id, n.weight, n.session_count FROM nodes n JOIN projects p ON p.id = n.project_id WHERE p.root = %s", project)
    }


def test_migrations_apply_from_empty_and_rerun_as_no_op() -> None:
    dsn = ws.fresh_dsn("mig")
    import psycopg

    with psycopg.connect(dsn) as conn:
        applied = migrate.migrate(conn)
        assert applied == [m.version for m in migrate.available()]
        assert migrate.migrate(conn) == []
        tables = {r[0] for r in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")}
    assert {"projects", "nodes", "edges", "node_sessions", "edge_sessions", "sessions", "reconciliations",
            "node_embeddings", "schema_migrations"} <= tables


def test_concurrent_migrations_both_succeed() -> None:
    dsn = ws.fresh_dsn("migc")
    import psycopg

    results: list[list[int]] = []

    def run() -> None:
        with psycopg.connect(dsn) as conn:
            results.append(migrate.migrate(conn))

    threads = [threading.Thread(target=run) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(len(r) for r in results)[-1] == len(migrate.available()) or sum(len(r) for r in results) == len(migrate.available())
    assert sum(len(r) for r in results) == len(migrate.available())


def test_reconciling_twice_changes_nothing(settings, project) -> None:  # type: ignore[no-untyped-def]
    doc = ws.hot_doc("s1", project, [ws.node("Use PostgreSQL", 0.8, at=T0), ws.node("Use SQLite", 0.3, at=T0)],
                     [("use-postgresql", "supersedes", "use-sqlite", 0.9)], at=T0)
    first = reconcile(settings, doc)
    before = warm_nodes(settings, project)
    second = reconcile(settings, doc)
    assert not first.noop and first.nodes_new == 2 and first.edges_new == 1
    assert second.noop
    assert warm_nodes(settings, project) == before
    assert before["use-postgresql"][1] == 1
    assert rows(settings, "SELECT count(*) FROM reconciliations WHERE session_id = 's1' AND project_id = "
                "(SELECT id FROM projects WHERE root = %s)", project) == [(1,)]


def test_pre_compact_then_session_end_replaces_the_sessions_contribution(settings, project) -> None:  # type: ignore[no-untyped-def]
    early = ws.hot_doc("s2", project, [ws.node("Gate heuristics", 0.4, at=T0)], at=T0, seq=5)
    late = ws.hot_doc("s2", project, [ws.node("Gate heuristics", 0.9, at=T0 + timedelta(hours=1)),
                                      ws.node("Dead man switch", 0.6, at=T0 + timedelta(hours=1))], at=T0, seq=9)
    reconcile(settings, early, "pre-compact")
    reconcile(settings, late, "session-end")
    fresh = ws.hot_doc("s-other", str(Path(project) / "fresh"), [ws.node("Gate heuristics", 0.9, at=T0 + timedelta(hours=1))], at=T0)
    reconcile(settings, fresh)
    nodes = warm_nodes(settings, project)
    # One session, counted once, weighted as its latest view: same as a single reconcile of `late`.
    assert nodes["gate-heuristics"][1] == 1
    assert nodes["gate-heuristics"][0] == pytest.approx(warm_nodes(settings, str(Path(project) / "fresh"))["gate-heuristics"][0])
    assert "dead-man-switch" in nodes
    triggers = rows(settings, "SELECT trigger, journal_seq FROM reconciliations r JOIN projects p ON p.id = r.project_id "
                    "WHERE p.root = %s ORDER BY r.id", project)
    assert triggers == [("pre-compact", 5), ("session-end", 9)]


def test_cross_session_frequency_over_three_sessions_raises_weight(settings, project) -> None:  # type: ignore[no-untyped-def]
    weights = []
    for i in range(3):
        at = T0 + timedelta(hours=i)
        reconcile(settings, ws.hot_doc(f"freq-{i}", project, [ws.node("Warm graph", 0.6, at=at)], at=at))
        weights.append(warm_nodes(settings, project)["warm-graph"])
    assert [w[1] for w in weights] == [1, 2, 3]
    assert weights[0][0] < weights[1][0] < weights[2][0]
    assert weights[0][0] == pytest.approx(0.6 * 0.85, abs=1e-6)


def test_a_sessions_uses_of_a_node_are_its_mentions_when_they_say_more(settings, project) -> None:  # type: ignore[no-untyped-def]
    """Activations rise at most once a probe batch; the events whose input named a node are
    the truer count of use, and what the warm graph's uses leg ranks a new session's names by."""
    for i, mentions in enumerate((7, 0)):
        at = T0 + timedelta(hours=i)
        used = {**ws.node("render_line", 0.5, at=at, kind="symbol"), "facts": {"mentions": mentions, "seq": 40}}
        reconcile(settings, ws.hot_doc(f"uses-{i}", project, [used], at=at))
    [(uses, facts)] = rows(settings, "SELECT n.activations, n.facts FROM nodes n JOIN projects p ON p.id = n.project_id "
                                     "WHERE p.root = %s AND n.id = 'render-line'", project)
    assert uses == 7 + 1  # the first session's 7 mentions, the second's one activation
    assert not facts or "mentions" not in facts  # a session's own count, never folded across sessions


def test_projects_are_isolated(settings, tmp_path) -> None:  # type: ignore[no-untyped-def]
    a, b = str(tmp_path / "a"), str(tmp_path / "b")
    reconcile(settings, ws.hot_doc("iso-a", a, [ws.node("Secret plan A", 0.9, at=T0)], at=T0, focus=["secret-plan-a"]))
    reconcile(settings, ws.hot_doc("iso-b", b, [ws.node("Plan B", 0.5, at=T0)], at=T0))
    assert set(warm_nodes(settings, b)) == {"plan-b"}
    snap_b = snapshot.read_snapshot(settings.home, b)
    assert snap_b is not None and [n["id"] for n in snap_b["nodes"]] == ["plan-b"]
    hot_b = ws.hot_doc("iso-b2", b, [], at=T0)
    with db.connect(settings) as conn:
        ops = pull.pull_ops(conn, hot_b, "secret plan A", embedder=embeddings.LexicalEmbedder())
    assert all("secret-plan" not in op["path"] for op in ops)


def test_supersedes_edge_survives_a_later_weaker_view(settings, project) -> None:  # type: ignore[no-untyped-def]
    nodes = [ws.node("Use Bento", 0.8, at=T0), ws.node("Use Resend", 0.3, at=T0)]
    reconcile(settings, ws.hot_doc("sup-1", project, nodes, [("use-bento", "supersedes", "use-resend", 0.9)], at=T0))
    later = T0 + timedelta(days=3)
    reconcile(settings, ws.hot_doc("sup-2", project, [ws.node("Use Bento", 0.8, at=later), ws.node("Use Resend", 0.1, at=later)],
                                   [("use-bento", "supersedes", "use-resend", 0.2)], at=later))
    reconcile(settings, ws.hot_doc("sup-3", project, [ws.node("Use Bento", 0.8, at=later)], at=later))
    got = rows(settings, "SELECT strength, session_count FROM edges e JOIN projects p ON p.id = e.project_id "
               "WHERE p.root = %s AND relationship = 'supersedes'", project)
    assert got == [(pytest.approx(0.9), 2)]


def test_two_sessions_reconciling_at_once_both_count(settings, project) -> None:  # type: ignore[no-untyped-def]
    docs = [ws.hot_doc(f"par-{i}", project, [ws.node("Shared idea", 0.5, at=T0), ws.node(f"Own idea {i}", 0.5, at=T0)], at=T0)
            for i in range(2)]
    errors: list[BaseException] = []

    def run(doc: dict) -> None:
        try:
            reconcile(settings, doc)
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(d,)) for d in docs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    nodes = warm_nodes(settings, project)
    assert nodes["shared-idea"][1] == 2
    assert {"own-idea-0", "own-idea-1"} <= set(nodes)


def test_resume_snapshot_puts_the_recent_focus_first(settings, project) -> None:  # type: ignore[no-untyped-def]
    for i in range(3):  # an old, heavy, frequent node
        at = T0 + timedelta(hours=i)
        reconcile(settings, ws.hot_doc(f"old-{i}", project, [ws.node("Legacy build system", 0.95, at=at)], at=at))
    recent = T0 + timedelta(days=10)
    reconcile(settings, ws.hot_doc("recent", project, [ws.node("Resume ranking", 0.55, at=recent),
                                                       ws.node("Snapshot file", 0.5, at=recent)],
                                   [("resume-ranking", "depends_on", "snapshot-file", 0.6)], at=recent, focus=["resume-ranking"]))
    snap = snapshot.read_snapshot(settings.home, project)
    assert snap is not None
    assert snap["nodes"][0]["id"] == "resume-ranking"
    assert snap["focus"] == ["resume-ranking"]
    doc = ws.hot_doc("next", project, [], at=recent)
    ops = snapshot.snapshot_ops(doc, snap, recent)
    assert ops[0]["path"] == "/nodes/resume-ranking"
    assert any(op["path"] == "/edges/resume-ranking|depends_on|snapshot-file" for op in ops)


def test_the_snapshot_names_the_sessions_that_touched_a_node_latest_first(settings, project) -> None:  # type: ignore[no-untyped-def]
    for i, sid in enumerate(("first", "second", "third", "fourth")):
        at = T0 + timedelta(days=i)
        reconcile(settings, ws.hot_doc(sid, project, [ws.node("Use Alembic for migrations", 0.7, at=at)], at=at))
    snap = snapshot.read_snapshot(settings.home, project)
    assert snap is not None
    (alembic,) = [n for n in snap["nodes"] if n["id"] == "use-alembic-for-migrations"]
    assert alembic["seen_in"] == ["fourth", "third", "second"]
    pulled = snapshot.snapshot_ops(ws.hot_doc("next", project, [], at=T0 + timedelta(days=9)), snap, T0 + timedelta(days=9))[0]["value"]
    assert pulled["seen_in"] == ["fourth", "third", "second"] and pulled["seen_at"].startswith((T0 + timedelta(days=3)).date().isoformat())


def test_a_session_records_the_order_it_found_its_names(settings, project) -> None:  # type: ignore[no-untyped-def]
    """The warm graph keeps where each name came in its session's discovery order (the
    opening leg's signal, :func:`rolling_graph.warm.rank.openings`); a node pulled from the
    warm graph has none (its first touch here is unknown)."""
    opened = [ws.node(f"entry_point_{i}", 0.5, at=T0 + timedelta(minutes=i), kind="symbol") for i in range(4)]
    ended = [ws.node(f"late_helper_{i}", 0.5, at=T0 + timedelta(hours=3, minutes=i), kind="symbol") for i in range(4)]
    pulled = {**ws.node("Known before", 0.5, at=T0 - timedelta(days=3)), "pulled": True, "activations": 2}
    for n in ended:  # touched late, and as often
        n["first_seen"] = n["last_activated"]
    reconcile(settings, ws.hot_doc("opening-1", project, [*ended, *opened, pulled], at=T0 + timedelta(hours=4)))
    got = dict(rows(settings, "SELECT x.node_id, x.opening FROM node_sessions x JOIN projects p ON p.id = x.project_id "
                              "WHERE p.root = %s", project))
    assert [got[f"entry-point-{i}"] for i in range(4)] == [1, 2, 3, 4]
    assert [got[f"late-helper-{i}"] for i in range(4)] == [5, 6, 7, 8]
    assert got["known-before"] is None
    # A session that touched only what it pulled has no discovery order at all.
    again = {**ws.node("Entry point 0", 0.6, at=T0 + timedelta(days=1), kind="symbol"), "id": "entry-point-0", "pulled": True, "activations": 1}
    reconcile(settings, ws.hot_doc("opening-2", project, [again], at=T0 + timedelta(days=1)))
    assert rows(settings, "SELECT x.opening FROM node_sessions x JOIN projects p ON p.id = x.project_id "
                          "WHERE p.root = %s AND x.session_id = 'opening-2'", project) == [(None,)]


def test_the_snapshot_leads_with_what_the_last_sessions_kept_using(settings, project) -> None:  # type: ignore[no-untyped-def]
    """Two early sessions used ``old_favourite`` five times each; the two latest used
    ``current_work`` three times each. Over all sessions the old name has more uses (10 to
    6), but each session's uses count half as much two sessions later, so the new session's
    snapshot puts the current work first."""
    for i, sid in enumerate(("s1", "s2", "s3", "s4")):
        at = T0 + timedelta(days=i)
        name = "old_favourite" if i < 2 else "current_work"
        reconcile(settings, ws.hot_doc(sid, project, [{**ws.node(name, 0.5, at=at, kind="symbol"), "activations": 5 if i < 2 else 3}], at=at))
    with db.connect(settings) as conn:
        pid = conn.execute("SELECT id FROM projects WHERE root = %s", (project,)).fetchone()[0]
        lately = resume.recent_uses(conn, pid, 2.0, ["current-work", "old-favourite", "never-seen"])
        pool, _ = resume.candidates(conn, pid, settings=rank.RESUME, per_leg=1)
    # ages: s4 0, s3 1, s2 2, s1 3 sessions
    assert lately["current-work"] == pytest.approx(3 * (1 + 0.5 ** 0.5))
    assert lately["old-favourite"] == pytest.approx(5 * (0.5 ** 1 + 0.5 ** 1.5))
    assert "never-seen" not in lately
    assert {c.id: c.recent_uses for c in pool} == pytest.approx(lately)  # every candidate carries its recent uses
    snap = snapshot.read_snapshot(settings.home, project)
    assert snap is not None
    order = [n["id"] for n in snap["nodes"]]
    assert order.index("current-work") < order.index("old-favourite")


def test_the_candidate_pool_breaks_ties_by_what_was_seen_first_not_by_where_rows_lie(settings) -> None:  # type: ignore[no-untyped-def]
    """Forty nodes alike in weight, recency, sessions and uses, written in the reverse of their
    ids' order, half of them first seen a day earlier: each leg's LIMIT keeps those seen first,
    then the first ids, whatever order the rows lie in the table. (Ties fell to the heap's order:
    a replay of the same sessions twice gave two snapshots.)"""
    ids = [f"name-{i:02d}" for i in range(40)]
    with db.connect(settings) as conn, conn.transaction():
        pid = conn.execute("INSERT INTO projects (root, key) VALUES ('/ties', 'ties') RETURNING id").fetchone()[0]
        for i, nid in reversed(list(enumerate(ids))):
            first_seen = T0 - timedelta(days=i % 2)  # the odd ones a day earlier
            conn.execute("INSERT INTO nodes (project_id, id, label, domain, weight, first_seen, last_activated, activations, "
                         "session_count) VALUES (%s, %s, %s, 'project', 0.5, %s, %s, 3, 2)", (pid, nid, nid, first_seen, T0))
    with db.connect(settings) as conn:
        pool, _ = resume.candidates(conn, pid, settings=rank.RESUME, per_leg=5)
    assert sorted(c.id for c in pool) == ["name-01", "name-03", "name-05", "name-07", "name-09"]


def test_embeddings_of_two_models_are_never_compared(settings, project) -> None:  # type: ignore[no-untyped-def]
    a = embeddings.LexicalEmbedder()
    b = embeddings.LexicalEmbedder(model="lexical-hash-v1-alt", salt="alt")
    reconcile(settings, ws.hot_doc("emb-a", project, [ws.node("Postgres vector index", 0.5, at=T0)], at=T0))
    with db.connect(settings) as conn:
        pid = conn.execute("SELECT id FROM projects WHERE root = %s", (project,)).fetchone()[0]
        with conn.transaction():
            conn.execute("INSERT INTO nodes (project_id, id, label, domain, weight, first_seen, last_activated) "
                         "VALUES (%s, 'only-in-b', 'Postgres vector index', 'technical', 0.5, now(), now())", (pid,))
            embeddings.ensure_index(conn, b.model, b.dim)
            text = "Postgres vector index"
            embeddings.store(conn, pid, b.model, b.dim, [("only-in-b", embeddings.content_hash(text), b.embed([text])[0])])
        with conn.transaction():
            hits_a = embeddings.similar(conn, pid, a.model, a.dim, a.embed(["Postgres vector index"])[0])
        with conn.transaction():
            hits_b = embeddings.similar(conn, pid, b.model, b.dim, b.embed(["Postgres vector index"])[0])
        models = dict(conn.execute("SELECT model, dim FROM embedding_models").fetchall())
    assert [h[0] for h in hits_a] == ["postgres-vector-index"]
    assert hits_a[0][1] == pytest.approx(1.0, abs=1e-3)
    assert [h[0] for h in hits_b] == ["only-in-b"]
    assert models[a.model] == 256 and models[b.model] == 256


def test_nearest_neighbour_query_uses_the_models_hnsw_index(settings, project) -> None:  # type: ignore[no-untyped-def]
    reconcile(settings, ws.hot_doc("plan-1", project, [ws.node(f"Topic {i}", 0.5, at=T0) for i in range(20)], at=T0))
    e = embeddings.LexicalEmbedder()
    vec = embeddings.vector_literal(e.embed(["topic"])[0])
    with db.connect(settings) as conn, conn.transaction():
        pid = conn.execute("SELECT id FROM projects WHERE root = %s", (project,)).fetchone()[0]
        conn.execute("SET LOCAL enable_seqscan = off")
        for _ in range(7):  # past psycopg's prepare threshold: generic plans must still match the partial index
            plan = "\n".join(r[0] for r in conn.execute(
                psycopg_sql("EXPLAIN ") + embeddings.nearest_sql(e.model, e.dim), (vec, pid, vec, 10)))
        assert embeddings.index_name(e.model, e.dim) in plan


def test_reembed_moves_every_node_to_one_model(settings, project) -> None:  # type: ignore[no-untyped-def]
    reconcile(settings, ws.hot_doc("re-1", project, [ws.node("Alpha", 0.5, at=T0), ws.node("Beta", 0.5, at=T0)], at=T0))
    alt = embeddings.LexicalEmbedder(model="lexical-hash-v1-re", salt="re", dim=64)
    with db.connect(settings) as conn, conn.transaction():
        pid = conn.execute("SELECT id FROM projects WHERE root = %s", (project,)).fetchone()[0]
        assert embeddings.reembed(conn, alt, pid, drop_other_models=True) == 2
        got = conn.execute("SELECT model, dim, count(*) FROM node_embeddings WHERE project_id = %s GROUP BY 1, 2", (pid,)).fetchall()
    assert got == [("lexical-hash-v1-re", 64, 2)]


def test_prompt_pull_brings_back_the_matching_branch(settings, project) -> None:  # type: ignore[no-untyped-def]
    nodes = [ws.node("Stripe webhook retries", 0.5, at=T0), ws.node("Idempotency keys", 0.5, at=T0)]
    nodes += [ws.node(f"Unrelated topic {i}", 0.7, at=T0) for i in range(30)]
    reconcile(settings, ws.hot_doc("pull-src", project, nodes, [("idempotency-keys", "informs", "stripe-webhook-retries", 0.7)], at=T0))
    doc = ws.hot_doc("pull-dst", project, [], at=T0 + timedelta(days=1))
    with db.connect(settings) as conn:
        ops = pull.pull_ops(conn, doc, "why do stripe webhook retries fail?", embedder=embeddings.LexicalEmbedder(), limit=5)
    assert ops[0]["path"] == "/nodes/stripe-webhook-retries"
    assert all(op["value"].get("origin", "warm") == "warm" for op in ops)


def test_status_reports_the_database_in_use(settings) -> None:  # type: ignore[no-untyped-def]
    info = db.status(settings)
    assert info["ok"] and info["kind"] == "external" and info["pgvector"]
    from rolling_graph.cli.warm import doctor_report

    checks = doctor_report(settings, deep=True)
    names = [c[0] for c in checks]
    assert names[0] == "warm database" and checks[0][1]
    assert any(n.startswith("hnsw recall@10") for n in names)
