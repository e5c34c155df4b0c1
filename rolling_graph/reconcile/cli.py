"""``rgraph reconcile | recover | db status|start|stop | reembed`` and ``doctor_report``.

``register(app)`` adds the commands to the lead's typer app. Errors print one actionable
line (rich) and exit 1; detail goes to ``$ROLLING_GRAPH_HOME/logs/``.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

import typer
from rich.console import Console

from rolling_graph.config import ConfigError, Settings, load_settings

console = Console()
err = Console(stderr=True)


def _settings() -> Settings:
    try:
        return load_settings()
    except ConfigError as exc:
        err.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(1) from exc


def _fail(message: str) -> None:
    err.print(f"[red]error:[/red] {message}")
    raise typer.Exit(1)


def reconcile_cmd(
    session: str | None = typer.Option(None, "--session", help="Session id to reconcile."),
    all_: bool = typer.Option(False, "--all", help="Every session with a sidecar."),
    as_json: bool = typer.Option(False, "--json", help="Print results as JSON."),
) -> None:
    """Merge hot sidecars into the warm graph now (idempotent)."""
    from rolling_graph.reconcile import db, recover
    from rolling_graph.reconcile.reconcile import load_sidecar, reconcile_doc

    settings = _settings()
    if bool(session) == all_:
        _fail("give exactly one of --session ID or --all")
    sids = [session] if session else [p.name[: -len(".graph.json")] for p in sorted(settings.sessions_dir.glob("*.graph.json"))]
    results: list[dict[str, Any]] = []
    try:
        with db.connect(settings) as conn:
            for sid in sids:
                doc = load_sidecar(settings, sid)
                if doc is None:
                    results.append({"session_id": sid, "error": "no sidecar"})
                    continue
                results.append(reconcile_doc(conn, settings, doc, "manual").as_dict())
    except db.DatabaseUnavailable as exc:
        for sid in sids:
            recover.enqueue(settings, sid, "manual", load_sidecar(settings, sid), str(exc))
        _fail(f"{exc} — queued {len(sids)} session(s); run `rgraph recover` once the database is back")
    if as_json:
        console.print_json(json.dumps(results, default=str))
        return
    for r in results:
        if "error" in r:
            console.print(f"{r['session_id']}: [yellow]{r['error']}[/yellow]")
        elif r["noop"]:
            console.print(f"{r['session_id']}: already up to date (journal {r['journal_seq']})")
        else:
            console.print(
                f"{r['session_id']}: {r['nodes_in']} nodes ({r['nodes_new']} new), {r['edges_in']} edges "
                f"({r['edges_new']} new) in {r['duration_ms']} ms"
            )


def recover_cmd(
    quick: bool = typer.Option(False, "--quick", help="Skip the transcript scan."),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Reconcile crashed sessions and retry queued work."""
    from rolling_graph.reconcile.recover import recover

    report = recover(_settings(), quick=quick)
    if as_json:
        console.print_json(json.dumps(asdict(report)))
        return
    console.print(f"reconciled {len(report.reconciled)} stale session(s); {len(report.queue_done)} queued job(s) done, "
                  f"{report.queue_left} still queued")
    if report.rebuilt:
        console.print(f"rebuilt from transcripts: {', '.join(report.rebuilt)}")
    if report.orphans:
        console.print(f"transcripts without a sidecar (no replay available): {', '.join(report.orphans[:20])}")
    for line in report.errors:
        err.print(f"[yellow]{line}[/yellow]")
    if report.database_down:
        raise typer.Exit(1)


db_app = typer.Typer(help="The warm graph's database.", no_args_is_help=True)


@db_app.command("status")
def db_status(as_json: bool = typer.Option(False, "--json")) -> None:
    """Which database is in use and whether it answers."""
    from rolling_graph.reconcile import db

    info = db.status(_settings())
    if as_json:
        console.print_json(json.dumps(info, default=str))
        return
    for key, value in info.items():
        console.print(f"{key}: {value}")
    if not info["ok"]:
        raise typer.Exit(1)


@db_app.command("start")
def db_start() -> None:
    """Start the embedded PostgreSQL (no-op with ROLLING_GRAPH_DSN)."""
    from rolling_graph.reconcile import db

    settings = _settings()
    try:
        target = db.resolve(settings)
        with db.connect(settings):
            pass
    except db.DatabaseUnavailable as exc:
        _fail(str(exc))
    console.print(f"{target.kind} database ready: {db.redact_dsn(target.dsn)}")


@db_app.command("stop")
def db_stop() -> None:
    """Stop the embedded PostgreSQL."""
    from rolling_graph.reconcile import server

    settings = _settings()
    if settings.dsn:
        _fail("ROLLING_GRAPH_DSN is set: that server is not ours to stop")
    console.print("stopped" if server.stop(settings.home) else "not running")


def reembed_cmd(
    model: str = typer.Option("auto", "--model", help="auto | ollama | lexical"),
    keep_old: bool = typer.Option(False, "--keep-old", help="Keep other models' vectors."),
) -> None:
    """Embed every warm node with one model (and by default drop other models' vectors)."""
    from rolling_graph.reconcile import db, embeddings

    settings = _settings()
    try:
        embedder = embeddings.get_embedder(settings, model)
    except ValueError as exc:
        _fail(str(exc))
    try:
        with db.connect(settings) as conn, conn.transaction():
            count = embeddings.reembed(conn, embedder, drop_other_models=not keep_old)
    except db.DatabaseUnavailable as exc:
        _fail(str(exc))
    console.print(f"embedded {count} node(s) with {embedder.model} ({embedder.dim}-d)")


def register(app: typer.Typer) -> None:
    app.command("reconcile")(reconcile_cmd)
    app.command("recover")(recover_cmd)
    app.command("reembed")(reembed_cmd)
    app.add_typer(db_app, name="db")


def hnsw_recall(conn: Any, model: str, dim: int, samples: int = 20, k: int = 10) -> float | None:
    """Mean recall@k of the model's HNSW index against exact search (same project, same model)."""
    from rolling_graph.reconcile import embeddings

    rows = conn.execute(
        "SELECT project_id, embedding::text FROM node_embeddings WHERE model = %s ORDER BY random() LIMIT %s", (model, samples)
    ).fetchall()
    if not rows:
        return None
    total = 0.0
    query = embeddings.nearest_sql(model, dim)
    for pid, vec in rows:
        with conn.transaction():
            conn.execute("SET LOCAL hnsw.ef_search = 100")
            approx = {r[0] for r in conn.execute(query, (vec, pid, vec, k))}
        with conn.transaction():
            conn.execute("SET LOCAL enable_indexscan = off")
            conn.execute("SET LOCAL enable_bitmapscan = off")
            exact = {r[0] for r in conn.execute(query, (vec, pid, vec, k))}
        total += len(approx & exact) / max(1, len(exact))
    return total / len(rows)


def doctor_report(settings: Settings, deep: bool = False) -> list[tuple[str, bool, str]]:
    """Checks for ``rgraph doctor``: (name, ok, one-line detail). Never starts the server."""
    from rolling_graph.reconcile import db, recover

    checks: list[tuple[str, bool, str]] = []
    info = db.status(settings)
    where = info.get("dsn") or info.get("pgdata", "")
    if info["ok"]:
        checks.append(("warm database", True, f"{info['kind']} PostgreSQL {info['server_version']}, pgvector "
                       f"{info['pgvector']}, schema v{info['schema_version']}, {info['nodes']} nodes, "
                       f"{info['latency_ms']} ms ({where})"))
    elif info["kind"] == "embedded" and not info.get("running"):
        checks.append(("warm database", True, f"embedded server not running; starts on first use ({where})"))
    else:
        checks.append(("warm database", False, f"{info.get('detail', 'unreachable')} ({where}); check ROLLING_GRAPH_DSN"))
    queued = recover.pending(settings)
    failed = list((recover.queue_dir(settings) / "failed").glob("*.json")) if (recover.queue_dir(settings) / "failed").is_dir() else []
    checks.append(("reconcile queue", not failed,
                   f"{len(queued)} pending, {len(failed)} failed" + ("; run `rgraph recover`" if queued or failed else "")))
    if deep and info["ok"]:
        try:
            with db.connect(settings, start=False) as conn:
                models = conn.execute("SELECT model, dim FROM embedding_models ORDER BY model").fetchall()
                conn.commit()
                if not models:
                    checks.append(("hnsw recall@10", True, "no embeddings yet"))
                for model, dim in models:
                    recall = hnsw_recall(conn, model, dim)
                    ok = recall is None or recall >= 0.9
                    checks.append((f"hnsw recall@10 {model}", ok,
                                   "no vectors" if recall is None else f"{recall:.2f} vs exact search ({dim}-d)"))
        except Exception as exc:  # noqa: BLE001
            checks.append(("hnsw recall@10", False, f"{type(exc).__name__}: {exc}"))
    return checks
