"""Node embeddings: Ollama ``mxbai-embed-large`` (1024-d) when it answers, else an offline
deterministic lexical embedder (``lexical-hash-v1``, 256-d: signed hashing of words and
character trigrams — it measures shared wording, not meaning, and says so in its name).

Every stored vector carries its model and dimension; similarity is only ever computed
between vectors of one model (queries filter on ``model`` and cast to its dimension).
pgvector indexes need a fixed dimension, so each model gets a partial HNSW index over
``embedding::vector(dim)`` restricted to ``model = '<name>'`` (:func:`ensure_index`).
"""

from __future__ import annotations

import hashlib
import math
import re
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from rolling_graph.core.config import Settings

if TYPE_CHECKING:
    from rolling_graph.warm.db import Connection

OLLAMA_MODEL = "mxbai-embed-large"
OLLAMA_DIM = 1024
LEXICAL_MODEL = "lexical-hash-v1"
LEXICAL_DIM = 256

#: HNSW build parameters. Inserting new nodes' vectors is the slowest step of a reconcile
#: (pgvector 0.6 re-prunes each new neighbour's list, ~m x 2m element loads per insert); the
#: smaller graph loses little recall (docs/measurements.md, "HNSW"). ``rgraph doctor --deep``
#: checks the recall; migration 003 rebuilt older indexes.
HNSW_M = 8
HNSW_EF_CONSTRUCTION = 32

_WORD_RE = re.compile(r"[a-z0-9]+")


class Embedder(Protocol):
    model: str
    dim: int
    #: Whether the texts it embeds stay in this process (no service sees them).
    local: ClassVar[bool]

    def embed(self, texts: Sequence[str]) -> list[list[float]]: ...


@dataclass
class LexicalEmbedder:
    """Deterministic, offline: hashed words (x2) and character trigrams, L2-normalised."""

    model: str = LEXICAL_MODEL
    dim: int = LEXICAL_DIM
    salt: str = ""
    local: ClassVar[bool] = True

    def _vector(self, text: str) -> list[float]:
        vec = [0.0] * self.dim
        words = _WORD_RE.findall(text.lower())
        features: list[tuple[str, float]] = [(f"w:{w}", 2.0) for w in words]
        for word in words:
            padded = f" {word} "
            features.extend((f"c:{padded[i:i + 3]}", 1.0) for i in range(len(padded) - 2))
        for feature, amount in features:
            h = zlib.crc32((self.salt + feature).encode("utf-8"))
            vec[h % self.dim] += amount if (h >> 31) & 1 else -amount
        norm = math.sqrt(sum(v * v for v in vec))
        return [v / norm for v in vec] if norm else vec

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [self._vector(t) for t in texts]


@dataclass
class OllamaEmbedder:
    host: str
    model: str = OLLAMA_MODEL
    dim: int = OLLAMA_DIM
    timeout_s: float = 10.0
    local: ClassVar[bool] = False  # the texts go to the Ollama server

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        import httpx

        response = httpx.post(
            f"{self.host.rstrip('/')}/api/embed", json={"model": self.model, "input": list(texts)}, timeout=self.timeout_s
        )
        response.raise_for_status()
        vectors = response.json()["embeddings"]
        if any(len(v) != self.dim for v in vectors):
            raise ValueError(f"{self.model} returned vectors of the wrong dimension (expected {self.dim})")
        return [[float(x) for x in v] for v in vectors]


def _port_open(host: str, timeout_s: float) -> bool:
    """Does anything accept a TCP connection at ``host`` (a URL such as ``http://127.0.0.1:11434``)?
    A plain socket: when nothing listens (the common case without Ollama) ``httpx`` and its
    TLS context, about 0.1 s of CPU, are never loaded."""
    import socket
    from urllib.parse import urlsplit

    try:
        url = urlsplit(host if "://" in host else f"http://{host}")
        port = url.port or (443 if url.scheme == "https" else 80)
        with socket.create_connection((url.hostname or "127.0.0.1", port), timeout=timeout_s):
            return True
    except (OSError, ValueError):
        return False


def _ollama_answers(host: str, model: str) -> bool:
    if not _port_open(host, 0.5):
        return False
    try:
        import httpx

        response = httpx.get(f"{host.rstrip('/')}/api/tags", timeout=0.5)
        names = {m.get("name", "").split(":")[0] for m in response.json().get("models", [])}
        return response.status_code == 200 and model in names
    except Exception:  # noqa: BLE001 - any failure means "not available"
        return False


def get_embedder(settings: Settings | None = None, choice: str | None = None) -> Embedder:
    """``choice``, else ``settings.embedder`` (``ROLLING_GRAPH_EMBEDDER``): ``auto`` (default)
    | ``ollama`` | ``lexical``."""
    choice = (choice or (settings.embedder if settings is not None else None) or "auto").strip().lower()
    host = settings.probe.ollama_host if settings is not None else "http://127.0.0.1:11434"
    if choice in ("lexical", LEXICAL_MODEL):
        return LexicalEmbedder()
    if choice in ("ollama", OLLAMA_MODEL) or (choice == "auto" and _ollama_answers(host, OLLAMA_MODEL)):
        return OllamaEmbedder(host=host)
    if choice != "auto":
        raise ValueError(f"ROLLING_GRAPH_EMBEDDER={choice!r} is not one of auto, ollama, lexical")
    return LexicalEmbedder()


def node_text(label: str, summary: str | None = None) -> str:
    return f"{label}. {summary}" if summary else label


def content_hash(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:16]


def vector_literal(vec: Sequence[float]) -> str:
    return "[" + ",".join(f"{x:.6g}" for x in vec) + "]"


def index_name(model: str, dim: int) -> str:
    safe = re.sub(r"[^a-z0-9]+", "_", model.lower()).strip("_")[:40]
    return f"node_emb_hnsw_{safe}_{dim}"


def ensure_index(conn: Connection, model: str, dim: int) -> str:
    """Create the model's partial HNSW index (cosine) once; returns its name."""
    name = index_name(model, dim)
    found = conn.execute("SELECT index_name FROM embedding_models WHERE model = %s", (model,)).fetchone()
    if found:
        return str(found[0])
    conn.execute("SELECT pg_advisory_xact_lock(hashtext('rgraph-embedding-index'))")
    literal = model.replace("'", "''")
    conn.execute(
        f"CREATE INDEX IF NOT EXISTS {name} ON node_embeddings "
        f"USING hnsw ((embedding::vector({int(dim)})) vector_cosine_ops) WITH (m = {HNSW_M}, ef_construction = {HNSW_EF_CONSTRUCTION}) "
        f"WHERE model = '{literal}'"
    )
    conn.execute(
        "INSERT INTO embedding_models (model, dim, index_name) VALUES (%s, %s, %s) ON CONFLICT (model) DO NOTHING",
        (model, dim, name),
    )
    return name


def store(conn: Connection, project_id: int, model: str, dim: int, rows: Sequence[tuple[str, str, Sequence[float]]]) -> int:
    """Upsert ``(node_id, content_hash, vector)`` rows for one model, in node-id order (two
    writers of the same rows then lock them in the same order).

    Vectors travel in pgvector's binary format (``conn`` must have ``register_vector``, as
    :func:`rolling_graph.warm.db.connect` does): 4x cheaper to build than text literals, and the
    server stores the exact float32 values instead of 6-digit decimals.
    """
    if not rows:
        return 0
    from pgvector import Vector

    rows = sorted(rows, key=lambda r: r[0])
    conn.execute(
        "INSERT INTO node_embeddings (project_id, node_id, model, dim, content_hash, embedding) "
        "SELECT %s, n, %s, %s, h, v FROM unnest(%s::text[], %s::text[], %b::vector[]) AS t(n, h, v) "
        "ON CONFLICT (project_id, node_id, model) DO UPDATE "
        "SET content_hash = EXCLUDED.content_hash, embedding = EXCLUDED.embedding, dim = EXCLUDED.dim, created_at = now()",
        (project_id, model, dim, [r[0] for r in rows], [r[1] for r in rows], [Vector(list(r[2])) for r in rows]),
    )
    return len(rows)


def nearest_sql(model: str, dim: int) -> Any:
    """The nearest-neighbour query for one model; params ``(vector, project_id, vector, limit)``.

    The model is inlined as a literal (not a parameter) so the planner can always match
    the model's partial HNSW index, even for prepared (generic) plans.
    """
    from psycopg import sql

    cast = sql.SQL(f"vector({int(dim)})")
    return sql.SQL(
        "SELECT node_id, 1 - (embedding::{cast} <=> %s::{cast}) AS sim FROM node_embeddings "
        "WHERE model = {model} AND project_id = %s ORDER BY embedding::{cast} <=> %s::{cast} LIMIT %s"
    ).format(cast=cast, model=sql.Literal(model))


def similar(
    conn: Connection, project_id: int, model: str, dim: int, query: Sequence[float], limit: int = 50, ef_search: int = 100
) -> list[tuple[str, float]]:
    """Nearest nodes of one project by cosine similarity, using only vectors of ``model``.

    Call inside a transaction (``hnsw.ef_search`` is set for it only).
    """
    conn.execute(f"SET LOCAL hnsw.ef_search = {int(ef_search)}")
    literal = vector_literal(query)
    rows = conn.execute(nearest_sql(model, dim), (literal, project_id, literal, limit)).fetchall()
    return [(r[0], float(r[1])) for r in rows]


def reembed(conn: Connection, embedder: Embedder, project_id: int | None = None, *, drop_other_models: bool = False) -> int:
    """Embed every node (of one project, or all) with ``embedder``; optionally drop other models' vectors."""
    where = "WHERE project_id = %s" if project_id is not None else ""
    params: tuple[Any, ...] = (project_id,) if project_id is not None else ()
    rows = conn.execute(f"SELECT project_id, id, label, summary FROM nodes {where}", params).fetchall()
    ensure_index(conn, embedder.model, embedder.dim)
    by_project: dict[int, list[tuple[str, str]]] = {}
    for pid, nid, label, summary in rows:
        by_project.setdefault(pid, []).append((nid, node_text(label, summary)))
    total = 0
    for pid, items in by_project.items():
        for start in range(0, len(items), 256):
            chunk = items[start:start + 256]
            vectors = embedder.embed([text for _, text in chunk])
            total += store(
                conn, pid, embedder.model, embedder.dim, [(nid, content_hash(text), vec) for (nid, text), vec in zip(chunk, vectors, strict=True)]
            )
    if drop_other_models:
        conn.execute(f"DELETE FROM node_embeddings WHERE model <> %s {'AND project_id = %s' if project_id is not None else ''}", (embedder.model, *params))
    return total


def fill_missing(conn: Connection, embedder: Embedder, limit: int = 5000) -> int:
    """Embed nodes that have no vector of ``embedder``'s model (e.g. a crash after the merge)."""
    rows = conn.execute(
        "SELECT n.project_id, n.id, n.label, n.summary FROM nodes n LEFT JOIN node_embeddings e "
        "ON e.project_id = n.project_id AND e.node_id = n.id AND e.model = %s WHERE e.node_id IS NULL LIMIT %s",
        (embedder.model, limit),
    ).fetchall()
    conn.commit()
    if not rows:
        return 0
    vectors = embedder.embed([node_text(label, summary) for _, _, label, summary in rows])
    by_project: dict[int, list[tuple[str, str, Sequence[float]]]] = {}
    for (pid, nid, label, summary), vec in zip(rows, vectors, strict=True):
        by_project.setdefault(pid, []).append((nid, content_hash(node_text(label, summary)), vec))
    with conn.transaction():
        ensure_index(conn, embedder.model, embedder.dim)
        return sum(store(conn, pid, embedder.model, embedder.dim, items) for pid, items in by_project.items())
