"""Benchmark the warm graph: reconcile a 2,000-node hot graph into a 100,000-node warm
graph (target < 2 s) and the prompt-time pull p95 (target < 200 ms).

Run by hand:  python bench/bench_reconcile.py [--warm 100000] [--hot 2000] [--pulls 50]

Uses ROLLING_GRAPH_DSN when set, else a throwaway embedded server. Prints each number as
a ratio against a baseline measured in the same run: reconciling the same hot graph into
an empty project, and a bare connect + ``SELECT 1``.
"""

from __future__ import annotations

import argparse
import io
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import psycopg  # noqa: E402

from reconcile import db, embeddings, pull, server  # noqa: E402
from reconcile.reconcile import reconcile_doc  # noqa: E402
from rolling_graph.config import Settings  # noqa: E402
from rolling_graph.model import DOMAINS, edge_key, make_edge, make_node, new_document  # noqa: E402

WORDS = ["cache", "index", "query", "schema", "hook", "probe", "graph", "decay", "focus", "ledger", "render", "budget", "token", "session", "merge", "weight", "anchor", "edge", "vector", "embed", "reconcile", "snapshot", "resume", "pull", "queue", "lock", "journal", "patch", "gate", "entity", "domain", "stripe", "webhook", "retry", "billing", "auth", "login", "deploy", "docker", "build", "test"]
NOW = datetime(2026, 11, 25, tzinfo=UTC)


def label(rng: random.Random, i: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(3)) + f" {i}"


def load_warm(dsn: str, root: str, n: int, rng: random.Random) -> dict[str, str]:
    """Bulk-load an n-node warm graph with COPY (nodes, contributions, edges, embeddings)."""
    embedder = embeddings.LexicalEmbedder()
    labels = [label(rng, i) for i in range(n)]
    ids = [f"n{i}-{labels[i].split()[0]}" for i in range(n)]
    t = time.perf_counter()
    vectors = embedder.embed(labels)
    print(f"  embedded {n} labels lexically in {time.perf_counter() - t:.1f} s")
    with psycopg.connect(dsn) as conn:
        pid = conn.execute("INSERT INTO projects (root, key) VALUES (%s, %s) RETURNING id", (root, "bench")).fetchone()[0]
        with conn.cursor().copy("COPY nodes (project_id, id, label, domain, kind, weight, first_seen, last_activated, "
                                "activations, session_count) FROM STDIN") as copy:
            for i in range(n):
                at = NOW - timedelta(hours=rng.random() * 24 * 90)
                copy.write_row((pid, ids[i], labels[i], DOMAINS[i % 4], "concept", round(rng.random(), 3), at, at, 1,
                                1 + i % 5))
        with conn.cursor().copy("COPY node_sessions (project_id, node_id, session_id, weight, activations, first_seen, "
                                "last_activated, journal_seq) FROM STDIN") as copy:
            for i in range(n):
                for s in range(1 + i % 5):
                    at = NOW - timedelta(days=30 - s)
                    copy.write_row((pid, ids[i], f"old-{s}", round(rng.random(), 3), 1, at, at, 1))
        with conn.cursor().copy("COPY edges (project_id, source, relationship, target, strength, first_seen, "
                                "last_activated, session_count) FROM STDIN") as copy:
            seen = set()
            for _ in range(int(n * 1.5)):
                a, b = rng.randrange(n), rng.randrange(n)
                key = (a, b)
                if a == b or key in seen:
                    continue
                seen.add(key)
                copy.write_row((pid, ids[a], "informs", ids[b], 0.5, NOW, NOW, 1))
        buf = io.StringIO()
        for i in range(n):
            buf.write(f"{pid}\t{ids[i]}\t{embedder.model}\t{embedder.dim}\t{embeddings.content_hash(labels[i])}\t"
                      f"{embeddings.vector_literal(vectors[i])}\n")
        with conn.cursor().copy("COPY node_embeddings (project_id, node_id, model, dim, content_hash, embedding) FROM STDIN") as copy:
            copy.write(buf.getvalue())
        conn.commit()
        t = time.perf_counter()
        conn.execute("SET maintenance_work_mem = '512MB'")
        embeddings.ensure_index(conn, embedder.model, embedder.dim)
        conn.commit()
        print(f"  built the HNSW index in {time.perf_counter() - t:.1f} s")
        conn.execute("ANALYZE")
        conn.commit()
    return dict(zip(ids, labels, strict=True))


def hot_doc(root: str, existing: dict[str, str], n: int, rng: random.Random) -> dict:
    doc = new_document(f"bench-{uuid.uuid4().hex[:8]}", root, now=NOW)
    reuse = rng.sample(sorted(existing), min(len(existing), n // 2))
    nodes = {}
    for nid in reuse:  # half the hot graph is already warm (same label: no re-embedding)
        nodes[nid] = dict(make_node(existing[nid], "technical", node_id=nid, weight=rng.random(), now=NOW))
    for i in range(n - len(reuse)):
        node = dict(make_node(label(rng, 10_000_000 + i), "project", weight=rng.random(), now=NOW))
        nodes[node["id"]] = node
    doc["nodes"] = nodes
    keys = list(nodes)
    edges = {}
    for _ in range(int(n * 1.5)):
        a, b = rng.sample(keys, 2)
        edges[edge_key(a, "informs", b)] = dict(make_edge(a, "informs", b, rng.random(), now=NOW))
    doc["edges"] = edges
    doc["focus"] = keys[:5]
    doc["journal_seq"] = 42
    return doc


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--warm", type=int, default=100_000)
    parser.add_argument("--hot", type=int, default=2_000)
    parser.add_argument("--pulls", type=int, default=50)
    args = parser.parse_args()
    os.environ["ROLLING_GRAPH_EMBEDDER"] = "lexical"
    rng = random.Random(7)
    home = Path(tempfile.mkdtemp(prefix="rgbench-", dir="/tmp"))
    started_server = False
    try:
        base = os.environ.get("ROLLING_GRAPH_DSN")
        if not base:
            server.ensure_running(home)
            started_server = True
            info = server.running_info(home)
            assert info is not None
            base = server.dsn_for(info, "postgres")
        name = f"bench_{uuid.uuid4().hex[:8]}"
        with psycopg.connect(base, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        dsn = psycopg.conninfo.make_conninfo(base, dbname=name)
        settings = Settings(home=home, dsn=dsn)
        with db.connect(settings):
            pass
        root = "/bench/project"
        print(f"loading a {args.warm:,}-node warm graph ...")
        existing = load_warm(dsn, root, args.warm, rng)

        # Baseline: the same hot graph size into an empty project.
        with db.connect(settings) as conn:
            t = time.perf_counter()
            base_result = reconcile_doc(conn, settings, hot_doc("/bench/empty", {}, args.hot, rng), "manual")
            baseline = base_result.duration_ms / 1000
            print(f"  baseline into an empty project: merge {base_result.duration_ms} ms, embed {base_result.embedded} "
                  f"in {base_result.embed_ms} ms, total {time.perf_counter() - t:.2f} s")
            doc = hot_doc(root, existing, args.hot, rng)
            t = time.perf_counter()
            result = reconcile_doc(conn, settings, doc, "session-end")
            total = time.perf_counter() - t
            elapsed = result.duration_ms / 1000
            t = time.perf_counter()
            again = reconcile_doc(conn, settings, doc, "session-end")
            noop = time.perf_counter() - t
        assert not result.noop and again.noop
        print(f"reconcile {args.hot:,} hot -> {args.warm:,} warm, merge committed in {elapsed:.3f} s "
              f"(target 2 s: {elapsed / 2:.2f}x of budget; {elapsed / baseline:.2f}x baseline {baseline:.3f} s into an empty project; "
              f"{result.nodes_new} new nodes, {result.edges_in} edges); idempotent re-run {noop * 1000:.0f} ms")
        print(f"  then the resume snapshot, then embeddings: {result.embedded} nodes embedded in {result.embed_ms} ms "
              f"(HNSW inserts); whole run {total:.2f} s")

        prompts = [" ".join(rng.choice(WORDS) for _ in range(8)) for _ in range(args.pulls)]
        pull_doc = new_document("bench-pull", root, now=NOW)
        pull_doc["focus"] = sorted(existing)[:3]
        times, connects = [], []
        embedder = embeddings.LexicalEmbedder()
        for prompt in prompts:
            t = time.perf_counter()
            with psycopg.connect(dsn) as c:
                c.execute("SELECT 1")
            connects.append(time.perf_counter() - t)
            t = time.perf_counter()
            with db.connect(settings) as conn:
                ops = pull.pull_ops(conn, pull_doc, prompt, embedder=embedder, now=NOW)
            times.append(time.perf_counter() - t)
        assert ops
        p95 = statistics.quantiles(times, n=20)[-1]
        base_p95 = statistics.quantiles(connects, n=20)[-1]
        print(f"prompt pull p95 over {args.pulls} prompts: {p95 * 1000:.1f} ms (target 200 ms: {p95 / 0.2:.2f}x of budget; "
              f"{p95 / base_p95:.1f}x baseline connect+SELECT 1 p95 {base_p95 * 1000:.1f} ms); median {statistics.median(times) * 1000:.1f} ms")
    finally:
        if started_server:
            server.stop(home)
        shutil.rmtree(home, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
