"""``rgraph reconcile | recover | db status|start|stop | reembed`` and ``doctor_report``.

``register(app)`` adds the commands to the lead's typer app. Errors print one actionable
line (rich) and exit 1; detail goes to ``$ROLLING_GRAPH_HOME/logs/``.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

import typer
from rich.console import Console

from rolling_graph.core.config import Settings, load_settings
from rolling_graph.core.errors import UserError
from rolling_graph.core.ids import validate_session_id
from rolling_graph.store.sidecar import SidecarStore
from rolling_graph.warm import embeddings, server

if TYPE_CHECKING:
    from rolling_graph.warm.db import Connection

console = Console()
err = Console(stderr=True)


def _settings() -> Settings:
    return load_settings()  # a ConfigError reaches the CLI's one error handler


def reconcile_cmd(
    session: str | None = typer.Option(None, "--session", help="Session id to reconcile."),
    all_: bool = typer.Option(False, "--all", help="Every session with a sidecar."),
    as_json: bool = typer.Option(False, "--json", help="Print results as JSON."),
) -> None:
    """Merge hot sidecars into the warm graph now (idempotent)."""
    from rolling_graph.replay import recover
    from rolling_graph.warm import db
    from rolling_graph.warm.reconcile import load_sidecar, reconcile_doc

    settings = _settings()
    if bool(session) == all_:
        raise UserError("give exactly one of --session ID or --all")
    store = SidecarStore(settings)
    if session and not store.exists(validate_session_id(session)):
        raise UserError(f"no session {session!r} under {settings.sessions_dir} (`rgraph sessions` lists them)")
    sids = [session] if session else sorted(store.list_sessions())
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
        queued = f" — queued {len(sids)} session(s); run `rgraph recover` once the database is back" if sids else ""
        raise UserError(f"{exc}{queued}") from exc
    if not sids and not as_json:
        console.print(f"no sessions under {settings.sessions_dir} yet")
    if as_json:
        console.print_json(json.dumps(results, default=str))
        if any("error" in r for r in results):
            raise typer.Exit(1)
        return
    for r in results:
        if "error" in r:
            err.print(f"rgraph: {r['session_id']}: {r['error']} under {settings.sessions_dir}")
        elif r["noop"]:
            console.print(f"{r['session_id']}: already up to date (journal {r['journal_seq']})")
        else:
            console.print(
                f"{r['session_id']}: {r['nodes_in']} nodes ({r['nodes_new']} new), {r['edges_in']} edges "
                f"({r['edges_new']} new) in {r['duration_ms']} ms"
            )
    if any("error" in r for r in results):
        raise typer.Exit(1)


def recover_cmd(
    quick: bool = typer.Option(False, "--quick", help="Skip the transcript scan."),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Reconcile crashed sessions and retry queued work."""
    from rolling_graph.replay.recover import recover

    report = recover(_settings(), quick=quick)
    if as_json:
        console.print_json(json.dumps(asdict(report)))
        return
    console.print(f"reconciled {len(report.reconciled)} stale session(s); {len(report.queue_done)} queued job(s) done, "
                  f"{report.queue_left} still queued")
    if report.rebuilt:
        console.print(f"rebuilt from transcripts: {', '.join(report.rebuilt)}")
    if report.cleaned:
        console.print(f"removed {len(report.cleaned)} temp file(s) left by killed writers")
    if report.orphans:
        console.print(f"transcripts whose replay produced no session: {', '.join(report.orphans[:20])}")
    for line in report.errors:
        err.print(f"[yellow]{line}[/yellow]")
    if report.database_down:
        raise typer.Exit(1)


db_app = typer.Typer(help="The warm graph's database.", no_args_is_help=True)


@db_app.command("status")
def db_status(as_json: bool = typer.Option(False, "--json")) -> None:
    """Which database is in use and whether it answers."""
    from rolling_graph.warm import db

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
    """Start the embedded PostgreSQL (no-op with ROLLING_GRAPH_DSN).

    It keeps running after this command, until it has been idle ``[db] idle_stop_s`` seconds
    (default 600) or ``rgraph db stop``."""
    from rolling_graph.warm import db

    settings = _settings()
    target = db.resolve(settings)
    with db.connect(settings):
        pass
    server.STARTED_HERE.discard(settings.home)  # asked for: not stopped when this command exits
    idle = settings.db.idle_stop_s
    after = f"; stops after {idle:g} s without a client (rgraph db stop to stop now)" if target.kind == "embedded" and idle > 0 else ""
    console.print(f"{target.kind} database ready: {db.redact_dsn(target.dsn)}{after}")


@db_app.command("stop")
def db_stop() -> None:
    """Stop the embedded PostgreSQL."""
    settings = _settings()
    if settings.dsn:
        raise UserError("ROLLING_GRAPH_DSN is set: that server is not ours to stop")
    console.print("stopped" if server.stop(settings.home) else "not running")


def reembed_cmd(
    model: str = typer.Option("auto", "--model", help="auto | ollama | lexical"),
    keep_old: bool = typer.Option(False, "--keep-old", help="Keep other models' vectors."),
) -> None:
    """Embed every warm node with one model (and by default drop other models' vectors)."""
    from rolling_graph.warm import db

    settings = _settings()
    try:
        embedder = embeddings.get_embedder(settings, model)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    with db.connect(settings) as conn, conn.transaction():
        count = embeddings.reembed(conn, embedder, drop_other_models=not keep_old)
    console.print(f"embedded {count} node(s) with {embedder.model} ({embedder.dim}-d)")


def register(app: typer.Typer) -> None:
    app.command("reconcile")(reconcile_cmd)
    app.command("recover")(recover_cmd)
    app.command("reembed")(reembed_cmd)
    app.add_typer(db_app, name="db")


def hnsw_recall(conn: Connection, model: str, dim: int, samples: int = 20, k: int = 10) -> float | None:
    """Mean recall@k of the model's HNSW index against exact search (same project, same model)."""
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
    from rolling_graph.replay import recover
    from rolling_graph.warm import db

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
        detail = str(info.get("detail", "unreachable"))
        checks.append(("warm database", False, detail if db.hint(settings) in detail else f"{detail} ({where}); {db.hint(settings)}"))
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
