"""Reconcile one session's hot sidecar into the warm graph, in ONE transaction.

Idempotent: the ``sessions`` row remembers the journal position last merged, so a second
run for the same ``(session, journal_seq)`` is a no-op, and a later run (pre-compact, then
session-end) *replaces* the session's per-node contributions; warm weights are recomputed
from all contributions (:mod:`rolling_graph.warm.merge`), so a session is never counted twice.
Reconciliations of one project are serialized by an advisory lock; after commit the
project's resume snapshot is rewritten. The rows themselves are written by
:mod:`rolling_graph.warm.upsert`; the nodes' vectors go in alongside, on a second connection that
commits after the merge (:mod:`rolling_graph.warm.embed_alongside`).
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from rolling_graph.core.clock import parse_iso
from rolling_graph.core.config import Settings
from rolling_graph.core.model import DOMAINS, KINDS, LABEL_MAX, SUMMARY_MAX, VERBS
from rolling_graph.render.rank import count, facts_of
from rolling_graph.safety.redact import redact
from rolling_graph.store.project import project_key
from rolling_graph.store.sidecar import SidecarStore
from rolling_graph.warm import coaccess, db, embeddings, forget, git_seed, keys, merge, rank, resume, upsert, warm_facts
from rolling_graph.warm.embed_alongside import EmbedAlongside, pending, store_pending
from rolling_graph.warm.snapshot_write import drop_whole_claim

if TYPE_CHECKING:
    from rolling_graph.core.types import Edge, GraphDoc, Node, SessionDoc
    from rolling_graph.warm.db import Connection

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
    #: Time after the merge's commit until the vectors were stored.
    embed_ms: int = 0
    total_ms: int = 0
    #: True when the vectors were inserted on a second connection during the merge.
    embedded_alongside: bool = False
    #: Why the vectors were not embedded alongside, when they were not ("" otherwise).
    embed_fallback: str = ""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def load_sidecar(settings: Settings, session_id: str) -> SessionDoc | None:
    """The session's hot document, or None when it has none."""
    store = SidecarStore(settings)
    return store.load(session_id) if store.exists(session_id) else None


class MissingProject(ValueError):
    """The sidecar does not say which project it belongs to; it cannot be merged safely."""


def doc_project(doc: GraphDoc) -> str:
    """The project root the sidecar belongs to (never guessed from this process's cwd)."""
    project = doc["project"]
    if not project:
        raise MissingProject(f"sidecar of session {doc['session_id']} has no project; it was not reconciled")
    return project


def _time(text: str, fallback: datetime) -> datetime:
    return parse_iso(text) or fallback


def _first_event(raw: Node) -> int | None:
    first = facts_of(raw).get("first")
    return first if isinstance(first, int) and not isinstance(first, bool) else None


def _clean_nodes(doc: GraphDoc, now: datetime, nodes: dict[str, Node] | None = None) -> list[dict[str, Any]]:
    """The hot nodes as the warm graph stores them: labels, summaries and facts redacted
    again (the warm graph outlives the session), values clamped to the warm schema. A node
    pulled from the warm graph and never touched in the session is marked ``untouched``:
    unless the warm graph has lost it, it is no contribution of this session's
    (:func:`rolling_graph.warm.upsert.upsert_nodes`). Each node the session found itself
    gets its ``opening``: its place in the session's discovery order (:func:`rank.openings`)."""
    out: list[dict[str, Any]] = []
    found: dict[str, datetime] = {}  # the session's own nodes: when it first saw each
    for node_id, raw in (doc["nodes"] if nodes is None else nodes).items():
        last = _time(raw["last_activated"], now)
        first = min(_time(raw["first_seen"], last), last)
        # A session's uses of a node: its activations (at most one a probe batch), or the
        # events whose input named it, whichever says more (rolling_graph.probe.offline_mentions).
        uses = max(raw["activations"], count(facts_of(raw), "mentions"))
        summary = raw.get("summary")
        kind = raw["kind"] if raw["kind"] in KINDS else "concept"
        out.append(
            {
                "id": node_id,
                "label": redact(raw["label"] or node_id)[:LABEL_MAX],
                "domain": raw["domain"] if raw["domain"] in DOMAINS else "technical",
                "kind": kind,
                "summary": redact(summary)[:SUMMARY_MAX] if summary else None,
                "confidence": merge.merge_confidence(None, raw["confidence"]),
                "weight": merge.clamp01(raw["weight"]),
                "anchor": raw["anchor"],
                "floor": merge.clamp01(raw["floor"]),
                "first_seen": first,
                "last_activated": last,
                "activations": max(1, uses),
                "sources": raw["sources"][:8],
                "facts": warm_facts.durable(kind, raw.get("facts")),
                "untouched": raw.get("pulled") is True and uses == 0,
                # The session's first event naming it (a session-only fact, never merged): the
                # co-access order, known for a node pulled from the warm graph too.
                "first": _first_event(raw),
            }
        )
        if raw.get("pulled") is not True:
            found[node_id] = first
    # The session's own discovery order; a pulled node's first touch here is not known.
    opening = rank.openings(found)
    for n in out:
        n["opening"] = opening.get(n["id"])
    return out


def _clean_edges(doc: GraphDoc, node_ids: set[str], now: datetime, edges: dict[str, Edge] | None = None) -> list[dict[str, Any]]:
    out = []
    for raw in (doc["edges"] if edges is None else edges).values():
        s, r, t = raw["source"], raw["relationship"], raw["target"]
        if s not in node_ids or t not in node_ids or r not in VERBS:
            continue
        out.append({"source": s, "relationship": r, "target": t, "strength": merge.clamp01(raw["strength"]),
                    "last_activated": _time(raw["last_activated"], now)})
    return out


def _last_active(nodes: list[dict[str, Any]], doc: GraphDoc, now: datetime) -> datetime:
    """When the session was last active: its most recent node of its own (else its last write)."""
    own = [n["last_activated"] for n in nodes if not n["untouched"]]
    return max(own) if own else _time(doc["updated_at"], now)


def ensure_project(conn: Connection, root: str) -> int:
    found = project_id(conn, root)
    if found is not None:
        return found
    row = conn.execute(
        "INSERT INTO projects (root, key) VALUES (%s, %s) ON CONFLICT (root) DO UPDATE SET updated_at = now() RETURNING id",
        (root, project_key(root)),
    )
    return int(db.one(row)[0])


def project_id(conn: Connection, root: str) -> int | None:
    row = conn.execute("SELECT id FROM projects WHERE root = %s", (root,)).fetchone()
    return int(row[0]) if row else None


def _already_merged(conn: Connection, root: str, session_id: str, seq: int) -> bool:
    row = conn.execute(
        "SELECT s.journal_seq FROM sessions s JOIN projects p ON p.id = s.project_id WHERE p.root = %s AND s.session_id = %s",
        (root, session_id),
    ).fetchone()
    conn.commit()
    return row is not None and int(row[0]) >= seq


def reconcile_doc(
    conn: Connection,
    settings: Settings,
    doc: GraphDoc,
    trigger: str,
    *,
    embedder: embeddings.Embedder | None = None,
    policy: merge.MergePolicy = merge.DEFAULT_POLICY,
    write_snapshot: bool = True,
    parallel_embedding: bool = True,
) -> ReconcileResult:
    """Merge ``doc`` (a hot sidecar document) into the warm graph.

    The merge (nodes, edges, contributions, session position, audit row) commits in ONE
    transaction; then the resume snapshot is rewritten. Embeddings are derived data in
    their own transaction: by default on a second connection, in parallel with the merge
    and committed after it (:mod:`rolling_graph.warm.embed_alongside`); with
    ``parallel_embedding=False`` or when that fails, after the merge on ``conn``. Any
    vectors a crash loses are filled in by ``rgraph recover``.
    """
    started = time.perf_counter()
    now = settings.clock.now()
    session_id = doc["session_id"]
    root = doc_project(doc)
    seq = doc["journal_seq"]
    if _already_merged(conn, root, session_id, seq):
        return ReconcileResult(session_id, root, trigger, seq, noop=True)
    hot_nodes, hot_edges = keys.rekey_files(doc["nodes"], doc["edges"], keys.doc_roots(doc))  # a sidecar from before stable keys
    nodes = _clean_nodes(doc, now, hot_nodes)
    edges = _clean_edges(doc, {n["id"] for n in nodes}, now, hot_edges)
    commits = _cold_start(conn, root)  # before the transaction: git runs outside any lock

    embedder = embedder or embeddings.get_embedder(settings)
    alongside: EmbedAlongside | None = None
    committed = False
    try:
        with conn.transaction():
            conn.execute(f"SELECT pg_advisory_xact_lock({upsert.PROJECT_LOCK})", (root,))
            drop_whole_claim(settings.home, root)  # until the snapshot is rewritten, it may lack what this merge adds
            pid = ensure_project(conn, root)
            row = conn.execute(
                "SELECT journal_seq FROM sessions WHERE project_id = %s AND session_id = %s", (pid, session_id)
            ).fetchone()
            if row is not None and int(row[0]) >= seq:
                return ReconcileResult(session_id, root, trigger, seq, noop=True)
            gone = forget.forgotten(conn, pid)  # what the user forgot stays forgotten (rgraph forget)
            if gone:
                nodes = forget.keep_remembered(nodes, gone)
                kept = {n["id"] for n in nodes}
                edges = [e for e in edges if e["source"] in kept and e["target"] in kept]
            if nodes and parallel_embedding:
                alongside = EmbedAlongside(conn, embedder, pid, nodes, root=root, session_id=session_id, seq=seq).start()
            fresh = upsert.upsert_nodes(conn, pid, session_id, seq, nodes, policy)
            edges_new = upsert.upsert_edges(conn, pid, session_id, seq, edges, policy)
            _record_co_access(conn, pid, session_id, nodes, _last_active(nodes, doc, now), now, commits)
            conn.execute(
                "INSERT INTO sessions (project_id, session_id, journal_seq, last_active) VALUES (%s, %s, %s, %s) "
                "ON CONFLICT (project_id, session_id) DO UPDATE SET journal_seq = EXCLUDED.journal_seq, last_reconciled_at = now(),"
                " last_active = greatest(sessions.last_active, EXCLUDED.last_active)",
                (pid, session_id, seq, _last_active(nodes, doc, now)),
            )
            focus = [f for f in (doc.get("focus") or []) if isinstance(f, str)][:8]
            conn.execute("UPDATE projects SET last_focus = %s, updated_at = now() WHERE id = %s", (focus, pid))
            duration_ms = int((time.perf_counter() - started) * 1000)
            conn.execute(
                "INSERT INTO reconciliations (project_id, session_id, trigger, journal_seq, nodes_in, nodes_new, edges_in, edges_new, duration_ms) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
                (pid, session_id, trigger, seq, len(nodes), len(fresh), len(edges), edges_new, duration_ms),
            )
        committed = True
    finally:
        if alongside is not None and not committed:
            alongside.join()  # it sees the rollback once the advisory lock is released
    if write_snapshot:  # the snapshot needs no vectors, and resume should not wait for HNSW inserts
        resume.refresh_snapshot(conn, settings, root)
    merged_at = time.perf_counter()
    alongside_ok = alongside is not None and alongside.join().ok
    if alongside is not None and alongside_ok:
        embedded = alongside.embedded
    else:  # no second connection, or it failed: embed here, after the merge
        embedded = embed_nodes(conn, embedder, pid, nodes, fresh=fresh)
    embed_ms = int((time.perf_counter() - merged_at) * 1000)
    return ReconcileResult(session_id, root, trigger, seq, False, len(nodes), len(fresh), len(edges), edges_new,
                           duration_ms, embedded, embed_ms, int((time.perf_counter() - started) * 1000), alongside_ok,
                           _fallback_reason(alongside))


def _cold_start(conn: Connection, root: str) -> list[git_seed.Commit]:
    """The project's recent commits when the warm graph has recorded no co-access for it yet
    (:mod:`rolling_graph.warm.git_seed`; bounded in commits and time), else none."""
    pid = project_id(conn, root)
    known = pid is not None and coaccess.has_sessions(conn, pid)
    conn.commit()
    return [] if known else git_seed.read_commits(root)


def _record_co_access(conn: Connection, pid: int, session_id: str, nodes: list[dict[str, Any]], at: datetime, now: datetime,
                      commits: list[git_seed.Commit]) -> None:
    """The session's files (and, on a cold start, the commits') as co-access; the project's
    pairs derived again (in the merge's transaction)."""
    for commit in commits:
        conn.execute(
            "INSERT INTO co_access_sessions (project_id, session_id, source, files, at) VALUES (%s, %s, 'git', %s, %s) "
            "ON CONFLICT (project_id, session_id) DO NOTHING",
            (pid, f"git:{commit.sha}", list(commit.files), commit.at),
        )
    coaccess.record(conn, pid, session_id, coaccess.session_files(nodes), at)
    coaccess.rebuild(conn, pid, now)


def _fallback_reason(alongside: EmbedAlongside | None) -> str:
    if alongside is None or alongside.ok:
        return ""
    if alongside.error is None:
        return "the vector transaction did not see the merge commit"
    lines = str(alongside.error).strip().splitlines()
    return f"{type(alongside.error).__name__}: {lines[0] if lines else ''}"


def embed_nodes(
    conn: Connection, embedder: embeddings.Embedder, pid: int, nodes: list[dict[str, Any]], *, fresh: set[str] | frozenset[str] = frozenset()
) -> int:
    """Embed the nodes whose text is new or changed, in their own transaction (see
    :func:`rolling_graph.warm.embed_alongside.pending` for ``fresh``)."""
    todo = pending(conn, embedder, pid, nodes, fresh)
    if not todo:
        return 0
    with conn.transaction():
        return store_pending(conn, embedder, pid, todo)


def reconcile_session(settings: Settings, session_id: str, trigger: str, *, doc: GraphDoc | None = None) -> ReconcileResult:
    """Load the session's sidecar and reconcile it. Raises ``db.DatabaseUnavailable`` when
    the database is down, or goes away during the reconcile (its transaction rolled back
    with it: nothing half-merged)."""
    doc = doc if doc is not None else load_sidecar(settings, session_id)
    if doc is None:
        raise FileNotFoundError(f"no sidecar for session {session_id} under {settings.sessions_dir}")
    try:
        with db.connect(settings) as conn:
            return reconcile_doc(conn, settings, doc, trigger)
    except db.CONNECTION_LOST as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise db.DatabaseUnavailable(f"the warm graph went away during the reconcile ({first}); {db.hint(settings)}") from exc

