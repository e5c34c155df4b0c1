"""The detached prompt-time pull: rank the project's warm graph against the prompt and
merge what it finds into the hot graph (``SidecarStore.apply_ops(kind="pull")``) so the
next injection can show it. Never pulls another project's nodes.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from rolling_graph.core.clock import utcnow
from rolling_graph.core.config import Settings
from rolling_graph.core.ids import pointer_parts
from rolling_graph.safety.redact import redact
from rolling_graph.store.sidecar import SidecarStore
from rolling_graph.warm import db, embeddings, rank, resume, snapshot
from rolling_graph.warm.reconcile import MissingProject, doc_project, project_id
from rolling_graph.warm.snapshot import SNAPSHOT_VERSION

if TYPE_CHECKING:
    from rolling_graph.core.types import GraphDoc, PatchOp, Snapshot
    from rolling_graph.warm.db import Connection

#: At most this many nodes per pull.
PULL_LIMIT = 12
#: Cosine similarity below this is noise, per model (lexical hashing shares stray trigrams).
MIN_SIMILARITY = {embeddings.LEXICAL_MODEL: 0.15, embeddings.OLLAMA_MODEL: 0.45}
DEFAULT_MIN_SIMILARITY = 0.35
SIMILAR_CANDIDATES = 50


def pull_ops(
    conn: Connection,
    doc: GraphDoc,
    prompt: str,
    *,
    embedder: embeddings.Embedder,
    now: datetime | None = None,
    limit: int = PULL_LIMIT,
) -> list[PatchOp]:
    """RFC 6902 ops adding the best-ranked warm nodes (and edges among them) the hot doc lacks."""
    now = now or utcnow()
    try:
        root = doc_project(doc)
    except MissingProject:  # a session that does not know its project pulls nothing
        return []
    pid = project_id(conn, root)
    if pid is None:
        return []
    sims: dict[str, float] = {}
    if prompt.strip():
        # The hook stored the prompt with its fast redaction. Text sent to an embedding service
        # gets the full one first; a local embedder's vector is a query, never stored or sent
        # as text (and the detect-secrets pass would cost the pull a third of its CPU).
        vector = embedder.embed([prompt if embedder.local else redact(prompt)])[0]
        with conn.transaction():
            found = embeddings.similar(conn, pid, embedder.model, embedder.dim, vector, limit=SIMILAR_CANDIDATES)
        floor = MIN_SIMILARITY.get(embedder.model, DEFAULT_MIN_SIMILARITY)
        sims = {nid: sim for nid, sim in found if sim >= floor}
    focus = [f for f in (doc.get("focus") or []) if isinstance(f, str)]
    pool, by_id = resume.candidates(conn, pid, focus=focus, similarity=sims, settings=rank.PULL, per_leg=SIMILAR_CANDIDATES)
    have = set((doc.get("nodes") or {}).keys())
    # A pull answers the prompt: only nodes that match it, or sit near the current focus, qualify;
    # weight, recency and frequency then order them.
    eligible = [c for c in pool if c.similarity is not None or (c.hops is not None and c.hops > 0)]
    ranked = [nid for nid in rank.rank(eligible, now, rank.PULL) if nid not in have][:limit]
    conn.commit()
    if not ranked:
        return []
    chosen: Snapshot = {
        "version": SNAPSHOT_VERSION,
        "project": root,
        "nodes": [resume.node_payload(by_id[nid]) for nid in ranked],
        "edges": resume.edges_among(conn, pid, ranked + sorted(have), snapshot.MAX_EDGES),
    }
    conn.commit()
    return snapshot.snapshot_ops(doc, chosen, now, max_nodes=limit)


def run_pull(settings: Settings, session_id: str, prompt: str) -> int:
    """Pull for one session; returns the number of nodes added to its hot graph."""
    store = SidecarStore(settings)
    doc = store.load(session_id)
    with db.connect(settings) as conn:
        ops = pull_ops(conn, doc, prompt, embedder=embeddings.get_embedder(settings), now=settings.clock.now())
    if not ops:
        return 0
    # The hot graph may have moved while we ranked: never overwrite what it now holds.
    current = store.load(session_id)
    fresh = [op for op in ops if not _exists(current, op["path"])]
    if not fresh:
        return 0
    nodes = sum(1 for op in fresh if op["path"].startswith("/nodes/"))
    store.apply_ops(session_id, fresh, kind="pull", rationale=f"warm pull: {nodes} nodes ranked against the prompt")
    return nodes


def _exists(doc: GraphDoc, path: str) -> bool:
    section, key = pointer_parts(path)[:2]
    return key in (doc["nodes"] if section == "nodes" else doc["edges"])
