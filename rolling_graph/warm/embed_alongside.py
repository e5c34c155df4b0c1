"""Embed a reconcile's nodes on a second connection while the merge runs.

Inserting vectors into the HNSW index is the slowest step of a reconcile (about 1 ms a
vector on a 100,000-vector index) and needs nothing from the merge but the node texts.
So the reconcile opens a second connection to the same database and inserts the vectors
in a parallel transaction, which stays open until the merge's transaction ends: it
commits after the merge commits and rolls back when the merge does not (it waits on the
project's advisory lock, so the server sees the wait). The vectors' foreign key to their nodes is checked at that commit (``SET CONSTRAINTS … DEFERRED``,
migration 004), when the merge's new nodes exist; so no crash can leave a vector without
its node, and vectors a crash loses are embedded again by ``rgraph recover``
(:func:`rolling_graph.warm.embeddings.fill_missing`).

If the second connection cannot be opened, or embedding fails, the caller embeds after
the merge on its own connection, as before (:func:`rolling_graph.warm.reconcile.embed_nodes`).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from rolling_graph.warm import embeddings
from rolling_graph.warm.upsert import PROJECT_LOCK

if TYPE_CHECKING:
    from rolling_graph.warm.db import Connection


class _MergeDidNotCommit(Exception):
    pass


def pending(
    conn: Connection, embedder: embeddings.Embedder, pid: int, nodes: Sequence[dict[str, Any]], fresh: set[str] | frozenset[str] = frozenset()
) -> list[tuple[str, str]]:
    """``(node_id, text)`` of the nodes whose text has no vector of ``embedder``'s model yet.

    ``fresh``: ids known to be new. They cannot have a vector (vectors cascade with their
    node), so their stored hashes are not looked up: on a cold cache each lookup is a
    random heap read, ~100 ms per 1,000 nodes. Ends the read's transaction.
    """
    texts = {n["id"]: embeddings.node_text(n["label"], n["summary"]) for n in nodes}
    lookup = [nid for nid in texts if nid not in fresh]
    known: dict[str, str] = {
        node_id: content_hash for node_id, content_hash in conn.execute(
            "SELECT node_id, content_hash FROM node_embeddings WHERE project_id = %s AND model = %s AND node_id = ANY(%s)",
            (pid, embedder.model, lookup),
        ).fetchall()
    } if lookup else {}
    conn.commit()
    return [(nid, text) for nid, text in texts.items() if known.get(nid) != embeddings.content_hash(text)]


def store_pending(conn: Connection, embedder: embeddings.Embedder, pid: int, todo: list[tuple[str, str]]) -> int:
    """Embed ``todo`` and upsert the vectors (inside the caller's transaction)."""
    if not todo:
        return 0
    vectors = embedder.embed([text for _, text in todo])
    embeddings.ensure_index(conn, embedder.model, embedder.dim)
    return embeddings.store(
        conn, pid, embedder.model, embedder.dim,
        [(nid, embeddings.content_hash(text), vec) for (nid, text), vec in zip(todo, vectors, strict=True)],
    )


def same_database(conn: Connection) -> str:
    """A connection string for the database ``conn`` is connected to (same user, same password)."""
    import psycopg

    extra = {"password": conn.info.password} if conn.info.password else {}
    return psycopg.conninfo.make_conninfo(conn.info.dsn, connect_timeout=5, **extra)


class EmbedAlongside:
    """Embed ``nodes`` in a background thread on its own connection; commit after the merge.

    Start it once the merge's transaction holds the project's advisory lock. After its
    inserts the vector transaction asks for the same lock (shared), so PostgreSQL itself
    makes it wait until the merge's transaction ends, and any lock cycle through it is
    seen by the server's deadlock detector rather than hanging in Python. It then commits
    if the merge recorded this session's journal position, and rolls back otherwise.
    ``join()`` before reading the result; ``ok`` is False when the caller must embed.
    """

    def __init__(
        self, conn: Connection, embedder: embeddings.Embedder, pid: int, nodes: Sequence[dict[str, Any]],
        *, root: str, session_id: str, seq: int,
    ) -> None:
        self._conninfo = same_database(conn)  # read here: libpq objects are not shared across threads
        self._embedder = embedder
        self._pid = pid
        self._nodes = list(nodes)
        self._merge = (root, session_id, seq)
        self._thread = threading.Thread(target=self._run, name="rgraph-embed", daemon=True)
        self.embedded = 0
        self.merge_committed = False
        self.error: BaseException | None = None

    def start(self) -> EmbedAlongside:
        self._thread.start()
        return self

    def join(self) -> EmbedAlongside:
        self._thread.join()
        return self

    @property
    def ok(self) -> bool:
        """The vectors are stored (after the merge committed)."""
        return self.error is None and self.merge_committed

    def _run(self) -> None:
        import psycopg
        from pgvector.psycopg import register_vector

        root, session_id, seq = self._merge
        try:
            with psycopg.connect(self._conninfo) as conn:
                register_vector(conn)
                todo = pending(conn, self._embedder, self._pid, self._nodes)
                try:
                    with conn.transaction():
                        conn.execute("SET CONSTRAINTS ALL DEFERRED")
                        count = store_pending(conn, self._embedder, self._pid, todo)  # stored in node-id order
                        conn.execute(f"SELECT pg_advisory_xact_lock_shared({PROJECT_LOCK})", (root,))  # the merge has ended
                        row = conn.execute("SELECT journal_seq FROM sessions WHERE project_id = %s AND session_id = %s",
                                           (self._pid, session_id)).fetchone()
                        self.merge_committed = row is not None and int(row[0]) >= seq
                        if not self.merge_committed:
                            raise _MergeDidNotCommit
                    self.embedded = count
                except _MergeDidNotCommit:
                    pass
        except Exception as exc:  # noqa: BLE001 - the caller falls back to embedding by itself
            self.error = exc
