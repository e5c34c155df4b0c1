"""Reconcile one session's hot sidecar into the warm graph, in ONE transaction.

Idempotent: the ``sessions`` row remembers the journal position last merged, so a second
run for the same ``(session, journal_seq)`` is a no-op, and a later run (pre-compact, then
session-end) *replaces* the session's per-node contributions; warm weights are recomputed
from all contributions (:mod:`reconcile.merge`), so a session is never counted twice.
Reconciliations of one project are serialized by an advisory lock; after commit the
project's resume snapshot is rewritten.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from reconcile import embeddings, merge
from rolling_graph.config import Settings
from rolling_graph.model import DOMAINS, KINDS, LABEL_MAX, SUMMARY_MAX, VERBS, parse_iso, utcnow
from rolling_graph.project import project_key

#: Test hook: seconds to sleep while holding the transaction (crash-safety tests).
SLEEP_IN_TX_ENV = "ROLLING_GRAPH_TEST_SLEEP_IN_TX"
TRIGGERS = ("pre-compact", "session-end", "manual", "recover")


@dataclass(frozen=True)
class ReconcileResult:
    session_id: str
    project: str
    trigger: str
    journal_seq: int
    noop: bool
    nodes_in: int = 0
    nodes_new: int = 0
    edges_in: int = 0
    edges_new: int = 0
    #: Time to the merge's commit; embedding and snapshot come after it.
    duration_ms: int = 0
    embedded: int = 0
    embed_ms: int = 0
    total_ms: int = 0

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _redact(text: str) -> str:
    try:
        from rolling_graph.redact import redact
    except ImportError:  # pragma: no cover - redact ships with the package
        return text
    return redact(text)


def load_sidecar(settings: Settings, session_id: str) -> dict[str, Any] | None:
    """The session's hot document (through SidecarStore when available), or None."""
    try:
        from rolling_graph.sidecar import SidecarStore
    except ImportError:
        SidecarStore = None  # noqa: N806
    if SidecarStore is not None:
        store = SidecarStore(settings)
        return store.load(session_id) if store.exists(session_id) else None
    path = settings.sessions_dir / f"{session_id}.graph.json"
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


class MissingProject(ValueError):
    """The sidecar does not say which project it belongs to; it cannot be merged safely."""


def doc_project(doc: dict[str, Any]) -> str:
    """The project root the sidecar belongs to (never guessed from this process's cwd)."""
    project = doc.get("project")
    if not isinstance(project, str) or not project:
        raise MissingProject(f"sidecar of session {doc.get('session_id')} has no project; it was not reconciled")
    return project


def _time(text: Any, fallback: datetime) -> datetime:
    return parse_iso(text) if isinstance(text, str) and parse_iso(text) else fallback


def _float01(value: Any, default: float) -> float:
    try:
        return merge.clamp01(float(value))
    except (TypeError, ValueError):
        return default


def _clean_nodes(doc: dict[str, Any], now: datetime) -> list[dict[str, Any]]:
    out = []
    for node_id, raw in (doc.get("nodes") or {}).items():
        if not isinstance(raw, dict):
            continue
        last = _time(raw.get("last_activated"), now)
        summary = raw.get("summary")
        out.append(
            {
                "id": str(node_id),
                "label": _redact(str(raw.get("label") or node_id))[:LABEL_MAX],
                "domain": raw.get("domain") if raw.get("domain") in DOMAINS else "technical",
                "kind": raw.get("kind") if raw.get("kind") in KINDS else "concept",
                "summary": _redact(summary)[:SUMMARY_MAX] if isinstance(summary, str) and summary else None,
                "confidence": merge.merge_confidence(None, raw.get("confidence")),
                "weight": _float01(raw.get("weight"), 0.5),
                "anchor": bool(raw.get("anchor", False)),
                "floor": _float01(raw.get("floor"), 0.0),
                "first_seen": min(_time(raw.get("first_seen"), last), last),
                "last_activated": last,
                "activations": max(1, int(raw.get("activations") or 1)),
                "sources": [str(s) for s in (raw.get("sources") or [])][:8],
            }
        )
    return out


def _clean_edges(doc: dict[str, Any], node_ids: set[str], now: datetime) -> list[dict[str, Any]]:
    out = []
    for raw in (doc.get("edges") or {}).values():
        if not isinstance(raw, dict):
            continue
        s, r, t = raw.get("source"), raw.get("relationship"), raw.get("target")
        if s not in node_ids or t not in node_ids or r not in VERBS:
            continue
        out.append({"source": s, "relationship": r, "target": t, "strength": _float01(raw.get("strength"), 0.5),
                    "last_activated": _time(raw.get("last_activated"), now)})
    return out


def ensure_project(conn: Any, root: str) -> int:
    found = project_id(conn, root)
    if found is not None:
        return found
    row = conn.execute(
        "INSERT INTO projects (root, key) VALUES (%s, %s) ON CONFLICT (root) DO UPDATE SET updated_at = now() RETURNING id",
        (root, project_key(root)),
    ).fetchone()
    return int(row[0])


def project_id(conn: Any, root: str) -> int | None:
    row = conn.execute("SELECT id FROM projects WHERE root = %s", (root,)).fetchone()
    return int(row[0]) if row else None


def _already_merged(conn: Any, root: str, session_id: str, seq: int) -> bool:
    row = conn.execute(
        "SELECT s.journal_seq FROM sessions s JOIN projects p ON p.id = s.project_id WHERE p.root = %s AND s.session_id = %s",
        (root, session_id),
    ).fetchone()
    conn.commit()
    return row is not None and int(row[0]) >= seq


def reconcile_doc(
    conn: Any,
    settings: Settings,
    doc: dict[str, Any],
    trigger: str,
    *,
    embedder: embeddings.Embedder | None = None,
    policy: merge.MergePolicy = merge.DEFAULT_POLICY,
    write_snapshot: bool = True,
) -> ReconcileResult:
    """Merge ``doc`` (a hot sidecar document) into the warm graph.

    The merge (nodes, edges, contributions, session position, audit row) commits in ONE
    transaction; then the resume snapshot is rewritten. Embeddings are derived data:
    they are computed and stored last, in their own transaction (HNSW inserts are the
    slow part), and any a crash loses are filled in by ``rgraph recover``.
    """
    started = time.perf_counter()
    now = utcnow()
    session_id = str(doc["session_id"])
    root = doc_project(doc)
    seq = int(doc.get("journal_seq") or 0)
    if _already_merged(conn, root, session_id, seq):
        return ReconcileResult(session_id, root, trigger, seq, noop=True)
    nodes = _clean_nodes(doc, now)
    edges = _clean_edges(doc, {n["id"] for n in nodes}, now)

    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(hashtext('rgraph-project:' || %s))", (root,))
        pid = ensure_project(conn, root)
        row = conn.execute(
            "SELECT journal_seq FROM sessions WHERE project_id = %s AND session_id = %s", (pid, session_id)
        ).fetchone()
        if row is not None and int(row[0]) >= seq:
            return ReconcileResult(session_id, root, trigger, seq, noop=True)
        nodes_new = _upsert_nodes(conn, pid, session_id, seq, nodes, policy)
        edges_new = _upsert_edges(conn, pid, session_id, seq, edges, policy)
        conn.execute(
            "INSERT INTO sessions (project_id, session_id, journal_seq) VALUES (%s, %s, %s) "
            "ON CONFLICT (project_id, session_id) DO UPDATE SET journal_seq = EXCLUDED.journal_seq, last_reconciled_at = now()",
            (pid, session_id, seq),
        )
        focus = [f for f in (doc.get("focus") or []) if isinstance(f, str)][:8]
        conn.execute("UPDATE projects SET last_focus = %s, updated_at = now() WHERE id = %s", (focus, pid))
        if os.environ.get(SLEEP_IN_TX_ENV):
            time.sleep(float(os.environ[SLEEP_IN_TX_ENV]))
        duration_ms = int((time.perf_counter() - started) * 1000)
        conn.execute(
            "INSERT INTO reconciliations (project_id, session_id, trigger, journal_seq, nodes_in, nodes_new, edges_in, edges_new, duration_ms) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
            (pid, session_id, trigger, seq, len(nodes), nodes_new, len(edges), edges_new, duration_ms),
        )
    if write_snapshot:  # before embedding: the snapshot needs none, and resume should not wait for HNSW inserts
        from reconcile import resume

        resume.refresh_snapshot(conn, settings, root)
    merged_at = time.perf_counter()
    embedded = embed_nodes(conn, embedder or embeddings.get_embedder(settings), pid, nodes)
    embed_ms = int((time.perf_counter() - merged_at) * 1000)
    return ReconcileResult(session_id, root, trigger, seq, False, len(nodes), nodes_new, len(edges), edges_new,
                           duration_ms, embedded, embed_ms, int((time.perf_counter() - started) * 1000))


def embed_nodes(conn: Any, embedder: embeddings.Embedder, pid: int, nodes: list[dict[str, Any]]) -> int:
    """Embed the nodes whose text is new or changed (their own transaction)."""
    texts = {n["id"]: embeddings.node_text(n["label"], n["summary"]) for n in nodes}
    if not texts:
        return 0
    known = dict(
        conn.execute(
            "SELECT node_id, content_hash FROM node_embeddings WHERE project_id = %s AND model = %s AND node_id = ANY(%s)",
            (pid, embedder.model, list(texts)),
        ).fetchall()
    )
    conn.commit()
    todo = [(nid, text) for nid, text in texts.items() if known.get(nid) != embeddings.content_hash(text)]
    if not todo:
        return 0
    vectors = embedder.embed([text for _, text in todo])
    with conn.transaction():
        embeddings.ensure_index(conn, embedder.model, embedder.dim)
        return embeddings.store(
            conn, pid, embedder.model, embedder.dim,
            [(nid, embeddings.content_hash(text), vec) for (nid, text), vec in zip(todo, vectors, strict=True)],
        )


def _upsert_nodes(conn: Any, pid: int, sid: str, seq: int, nodes: list[dict[str, Any]], policy: merge.MergePolicy) -> int:
    if not nodes:
        return 0
    col = {k: [n[k] for n in nodes] for k in nodes[0]}
    inserted = conn.execute(
        "INSERT INTO nodes AS w (project_id, id, label, domain, kind, summary, confidence, weight, anchor, floor, first_seen, last_activated, activations) "
        "SELECT %s, * FROM unnest(%s::text[], %s::text[], %s::text[], %s::text[], %s::text[], %s::text[], %s::real[], %s::bool[], %s::real[], "
        "%s::timestamptz[], %s::timestamptz[], %s::int[]) "
        "ON CONFLICT (project_id, id) DO UPDATE SET "
        " label = CASE WHEN EXCLUDED.last_activated >= w.last_activated THEN EXCLUDED.label ELSE w.label END,"
        " domain = CASE WHEN EXCLUDED.last_activated >= w.last_activated THEN EXCLUDED.domain ELSE w.domain END,"
        " kind = CASE WHEN EXCLUDED.last_activated >= w.last_activated THEN EXCLUDED.kind ELSE w.kind END,"
        " summary = CASE WHEN EXCLUDED.last_activated >= w.last_activated THEN coalesce(EXCLUDED.summary, w.summary) ELSE coalesce(w.summary, EXCLUDED.summary) END,"
        " anchor = w.anchor OR EXCLUDED.anchor, floor = greatest(w.floor, EXCLUDED.floor),"
        " first_seen = least(w.first_seen, EXCLUDED.first_seen), last_activated = greatest(w.last_activated, EXCLUDED.last_activated),"
        " updated_at = now() "
        "RETURNING id, (xmax = 0) AS inserted, w.confidence",
        (pid, col["id"], col["label"], col["domain"], col["kind"], col["summary"], col["confidence"], col["weight"],
         col["anchor"], col["floor"], col["first_seen"], col["last_activated"], col["activations"]),
    ).fetchall()
    new_count = sum(1 for r in inserted if r[1])
    conn.execute(
        "INSERT INTO node_sessions (project_id, node_id, session_id, weight, activations, first_seen, last_activated, sources, journal_seq) "
        "SELECT %s, n, %s, wt, a, f, l, CASE WHEN s = '' THEN '{}'::text[] ELSE string_to_array(s, chr(31)) END, %s "
        "FROM unnest(%s::text[], %s::real[], %s::int[], %s::timestamptz[], %s::timestamptz[], %s::text[]) AS t(n, wt, a, f, l, s) "
        "ON CONFLICT (project_id, node_id, session_id) DO UPDATE SET weight = EXCLUDED.weight, activations = EXCLUDED.activations,"
        " first_seen = least(node_sessions.first_seen, EXCLUDED.first_seen), last_activated = EXCLUDED.last_activated,"
        " sources = EXCLUDED.sources, journal_seq = EXCLUDED.journal_seq",
        (pid, sid, seq, col["id"], col["weight"], col["activations"], col["first_seen"], col["last_activated"],
         [chr(31).join(s) for s in col["sources"]]),
    )
    # Confidence: the stronger kind wins (corrections outrank everything).
    current = {r[0]: r[2] for r in inserted}
    conf_ids, conf_vals = [], []
    for n in nodes:
        merged = merge.merge_confidence(current.get(n["id"]), n["confidence"])
        if merged != current.get(n["id"]):
            conf_ids.append(n["id"])
            conf_vals.append(merged)
    if conf_ids:
        conn.execute(
            "UPDATE nodes SET confidence = t.c FROM unnest(%s::text[], %s::text[]) AS t(i, c) WHERE project_id = %s AND id = t.i",
            (conf_ids, conf_vals, pid),
        )
    recompute_nodes(conn, pid, col["id"], policy)
    return new_count


def recompute_nodes(conn: Any, pid: int, node_ids: list[str], policy: merge.MergePolicy = merge.DEFAULT_POLICY) -> None:
    """Recompute warm weight, session count and activations of ``node_ids`` from their contributions."""
    meta = {
        r[0]: r[1:]
        for r in conn.execute(
            "SELECT id, seed_weight, first_seen, anchor, floor FROM nodes WHERE project_id = %s AND id = ANY(%s)", (pid, node_ids)
        )
    }
    contributions: dict[str, list[merge.Contribution]] = {}
    activations: dict[str, int] = {}
    for nid, sid, weight, last, acts in conn.execute(
        "SELECT node_id, session_id, weight, last_activated, activations FROM node_sessions WHERE project_id = %s AND node_id = ANY(%s)",
        (pid, node_ids),
    ):
        contributions.setdefault(nid, []).append(merge.Contribution(sid, weight, last))
        activations[nid] = activations.get(nid, 0) + acts
    ids, weights, counts, acts_out = [], [], [], []
    for nid, (seed_weight, first_seen, anchor, floor) in meta.items():
        cs = contributions.get(nid, [])
        ids.append(nid)
        weights.append(merge.node_weight(cs, seed_weight=seed_weight, seed_time=first_seen, anchor=anchor, floor=floor, policy=policy))
        counts.append(len(cs))
        acts_out.append(activations.get(nid, 0))
    conn.execute(
        "UPDATE nodes SET weight = t.w, session_count = t.c, activations = t.a "
        "FROM unnest(%s::text[], %s::real[], %s::int[], %s::int[]) AS t(i, w, c, a) WHERE project_id = %s AND id = t.i",
        (ids, weights, counts, acts_out, pid),
    )


def _upsert_edges(conn: Any, pid: int, sid: str, seq: int, edges: list[dict[str, Any]], policy: merge.MergePolicy) -> int:
    if not edges:
        return 0
    s = [e["source"] for e in edges]
    r = [e["relationship"] for e in edges]
    t = [e["target"] for e in edges]
    st = [e["strength"] for e in edges]
    la = [e["last_activated"] for e in edges]
    inserted = conn.execute(
        "INSERT INTO edges AS e (project_id, source, relationship, target, strength, first_seen, last_activated) "
        "SELECT %s, s, r, t, st, la, la FROM unnest(%s::text[], %s::text[], %s::text[], %s::real[], %s::timestamptz[]) AS u(s, r, t, st, la) "
        "ON CONFLICT (project_id, source, relationship, target) DO UPDATE SET last_activated = greatest(e.last_activated, EXCLUDED.last_activated) "
        "RETURNING (xmax = 0)",
        (pid, s, r, t, st, la),
    ).fetchall()
    conn.execute(
        "INSERT INTO edge_sessions (project_id, source, relationship, target, session_id, strength, last_activated, journal_seq) "
        "SELECT %s, s, r, t, %s, st, la, %s FROM unnest(%s::text[], %s::text[], %s::text[], %s::real[], %s::timestamptz[]) AS u(s, r, t, st, la) "
        "ON CONFLICT (project_id, source, relationship, target, session_id) DO UPDATE SET strength = EXCLUDED.strength,"
        " last_activated = EXCLUDED.last_activated, journal_seq = EXCLUDED.journal_seq",
        (pid, sid, seq, s, r, t, st, la),
    )
    contributions: dict[tuple[str, str, str], list[merge.Contribution]] = {}
    for es, er, et, esid, strength, last in conn.execute(
        "SELECT x.source, x.relationship, x.target, x.session_id, x.strength, x.last_activated "
        "FROM unnest(%s::text[], %s::text[], %s::text[]) AS u(s, r, t) JOIN edge_sessions x "
        "ON x.project_id = %s AND x.source = u.s AND x.relationship = u.r AND x.target = u.t",
        (s, r, t, pid),
    ):
        contributions.setdefault((es, er, et), []).append(merge.Contribution(esid, strength, last))
    items = list(contributions.items())
    conn.execute(
        "UPDATE edges SET strength = u.st, session_count = u.c FROM unnest(%s::text[], %s::text[], %s::text[], %s::real[], %s::int[]) AS u(s, r, t, st, c) "
        "WHERE project_id = %s AND source = u.s AND relationship = u.r AND target = u.t",
        ([k[0] for k, _ in items], [k[1] for k, _ in items], [k[2] for k, _ in items],
         [merge.edge_strength(k[1], cs, policy) for k, cs in items], [len(cs) for _, cs in items], pid),
    )
    return sum(1 for row in inserted if row[0])


def reconcile_session(settings: Settings, session_id: str, trigger: str, *, doc: dict[str, Any] | None = None) -> ReconcileResult:
    """Load the session's sidecar and reconcile it. Raises ``db.DatabaseUnavailable`` when down."""
    from reconcile import db

    doc = doc if doc is not None else load_sidecar(settings, session_id)
    if doc is None:
        raise FileNotFoundError(f"no sidecar for session {session_id} under {settings.sessions_dir}")
    with db.connect(settings) as conn:
        return reconcile_doc(conn, settings, doc, trigger)


def sidecar_paths(settings: Settings) -> list[Path]:
    return sorted(settings.sessions_dir.glob("*.graph.json"))
