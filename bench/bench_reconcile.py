"""Benchmark the warm graph: reconcile a 2,000-node hot graph into a 100,000-node warm
graph (target < 2 s) and the prompt-time pull p95 (target < 200 ms).

Run by hand:  python bench/bench_reconcile.py [--warm 100000] [--hot 2000] [--runs 5] [--pulls 50] [--serial]

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

from rolling_graph.core.config import Settings  # noqa: E402
from rolling_graph.core.ids import edge_key
from rolling_graph.core.model import DOMAINS, make_edge, make_node, new_document  # noqa: E402
from rolling_graph.core.types import Edge, Node, SessionDoc  # noqa: E402
from rolling_graph.warm import db, embeddings, pull, server  # noqa: E402
from rolling_graph.warm.reconcile import reconcile_doc  # noqa: E402

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
        row = conn.execute("INSERT INTO projects (root, key) VALUES (%s, %s) RETURNING id", (root, "bench")).fetchone()
        assert row is not None
        pid = row[0]
        with conn.cursor().copy("COPY nodes (project_id, id, label, domain, kind, weight, first_seen, last_activated, "
                                "activations, session_count) FROM STDIN") as copy:
            for i in range(n):
                at = NOW - timedelta(hours=rng.random() * 24 * 90)
                copy.write_row((pid, ids[i], labels[i], DOMAINS[i % 4], "concept", round(rng.random(), 3), at, at, 1,
                                1 + i % 5))
        with conn.cursor().copy("COPY node_sessions (project_id, node_id, session_id, weight, activations, first_seen, "
                                "last_activated, journal_seq, opening) FROM STDIN") as copy:
            for i in range(n):
                for s in range(1 + i % 5):
                    at = NOW - timedelta(days=30 - s)
                    copy.write_row((pid, ids[i], f"old-{s}", round(rng.random(), 3), 1, at, at, 1, 1 + i // (s + 1)))
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
    # Settle the bulk load before measuring: otherwise autovacuum and the checkpointer
    # work through 100,000 fresh rows on the same 2 cores during the timed reconcile.
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("VACUUM (ANALYZE)")
        conn.execute("CHECKPOINT")
    return dict(zip(ids, labels, strict=True))


def hot_doc(root: str, existing: dict[str, str], n: int, rng: random.Random) -> SessionDoc:
    doc = new_document(f"bench-{uuid.uuid4().hex[:8]}", root, now=NOW)
    reuse = rng.sample(sorted(existing), min(len(existing), n // 2))
    nodes: dict[str, Node] = {}
    for nid in reuse:  # half the hot graph is already warm (same label: no re-embedding)
        nodes[nid] = make_node(existing[nid], "technical", node_id=nid, weight=rng.random(), now=NOW)
    for i in range(n - len(reuse)):
        node = make_node(label(rng, 10_000_000 + i), "project", weight=rng.random(), now=NOW)
        nodes[node["id"]] = node
    doc["nodes"] = nodes
    keys = list(nodes)
    edges: dict[str, Edge] = {}
    for _ in range(int(n * 1.5)):
        a, b = rng.sample(keys, 2)
        edges[edge_key(a, "informs", b)] = make_edge(a, "informs", b, rng.random(), now=NOW)
    doc["edges"] = edges
    doc["focus"] = keys[:5]
    doc["journal_seq"] = 42
    return doc


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--warm", type=int, default=100_000)
    parser.add_argument("--hot", type=int, default=2_000)
    parser.add_argument("--pulls", type=int, default=50)
    parser.add_argument("--runs", type=int, default=5, help="sessions reconciled into the warm graph (median reported)")
    parser.add_argument("--serial", action="store_true", help="embed after the merge on one connection (the fallback path)")
    args = parser.parse_args()
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
        settings = Settings(home=home, dsn=dsn, embedder="lexical")
        with db.connect(settings):
            pass
        root = "/bench/project"
        print(f"loading a {args.warm:,}-node warm graph ...")
        existing = load_warm(dsn, root, args.warm, rng)

        # Baseline: the same hot graph size into an empty project.
        with db.connect(settings) as conn:
            t = time.perf_counter()
            base_result = reconcile_doc(conn, settings, hot_doc("/bench/empty", {}, args.hot, rng), "manual",
                                        parallel_embedding=not args.serial)
            base_total = time.perf_counter() - t
            print(f"  baseline into an empty project: merge {base_result.duration_ms} ms, {base_result.embedded} vectors "
                  f"stored {base_result.embed_ms} ms later, total {base_total:.2f} s")
            runs = []  # several sessions: this machine's timing noise is larger than one run can show
            for _ in range(args.runs):
                doc = hot_doc(root, existing, args.hot, rng)
                t = time.perf_counter()
                result = reconcile_doc(conn, settings, doc, "session-end", parallel_embedding=not args.serial)
                runs.append((time.perf_counter() - t, result))
                assert not result.noop
            t = time.perf_counter()
            again = reconcile_doc(conn, settings, doc, "session-end")
            noop = time.perf_counter() - t
        assert again.noop
        totals = sorted(total for total, _ in runs)
        total = statistics.median(totals)
        elapsed = statistics.median(r.duration_ms for _, r in runs) / 1000
        embed_ms = statistics.median(r.embed_ms for _, r in runs)
        result = runs[0][1]
        print(f"reconcile {args.hot:,} hot -> {args.warm:,} warm ({result.nodes_new} new nodes, {result.edges_in} edges), "
              f"median of {args.runs} sessions: whole run {total:.2f} s (target 2 s: {total / 2:.2f}x of budget; "
              f"{total / base_total:.2f}x baseline {base_total:.2f} s into an empty project); slowest {totals[-1]:.2f} s")
        how = "on a second connection during the merge" if result.embedded_alongside else f"after the merge ({result.embed_fallback or 'serial'})"
        print(f"  merge committed in {elapsed:.3f} s; {result.embedded} nodes' vectors inserted into HNSW {how}, "
              f"stored {embed_ms:.0f} ms after the commit and resume snapshot; idempotent re-run {noop * 1000:.0f} ms")

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
