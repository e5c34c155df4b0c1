"""Connections to the warm graph: ``ROLLING_GRAPH_DSN`` (any PostgreSQL >= 15 with ``vector``)
or the embedded server under ``$ROLLING_GRAPH_HOME/pg``.

``connect()`` resolves the DSN, starts the embedded server when needed, registers the
pgvector adapter and applies pending migrations (once per process and DSN).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import psycopg
from pgvector.psycopg import register_vector
from psycopg.rows import TupleRow

from rolling_graph.core.config import Settings
from rolling_graph.core.errors import RollingGraphError
from rolling_graph.warm import migrate, server, server_watch

#: A connection to the warm graph as :func:`connect` opens it: psycopg 3's, rows as tuples.
Connection = psycopg.Connection[TupleRow]

#: Seconds to wait for an external server before calling it unreachable.
CONNECT_TIMEOUT_S = 5

_migrated: set[str] = set()


class DatabaseUnavailable(RollingGraphError, RuntimeError):
    """The warm graph cannot be reached now; work is queued and retried (``rgraph recover``)."""


#: What psycopg raises when the server goes away while a connection is in use (killed,
#: stopped, restarted): the work is as unfinished as if it could not connect at all.
CONNECTION_LOST: tuple[type[Exception], ...] = (psycopg.OperationalError, psycopg.InterfaceError)


@dataclass(frozen=True)
class Target:
    dsn: str
    kind: str  # "external" | "embedded"


def resolve(settings: Settings, *, start: bool = True) -> Target:
    """Which database to use; starts the embedded server when ``start`` and no DSN is set."""
    if settings.dsn:
        return Target(settings.dsn, "external")
    if not start:
        info = server.running_info(settings.home)
        if info is None:
            raise DatabaseUnavailable(f"the embedded PostgreSQL under {server.pg_dir(settings.home)} is not running")
        return Target(server.dsn_for(info), "embedded")
    started_before = settings.home in server.STARTED_HERE
    try:
        dsn = server.ensure_running(settings.home)
    except server.EmbeddedServerError as exc:
        raise DatabaseUnavailable(str(exc)) from exc
    if not started_before and settings.home in server.STARTED_HERE and settings.db.idle_stop_s > 0:
        server_watch.start_watchdog(settings.home, settings.db.idle_stop_s)
    return Target(dsn, "embedded")


def one(cursor: psycopg.Cursor[TupleRow]) -> TupleRow:
    """The row a statement returns by its form (an aggregate, ``INSERT … RETURNING``, a row
    the caller's transaction holds); its absence is a bug, said as such."""
    row = cursor.fetchone()
    if row is None:
        raise LookupError("the statement returned no row where one was certain")
    return row


def hint(settings: Settings) -> str:
    """What to do when the warm graph cannot be reached, for the database in use."""
    if settings.dsn:
        return "check the DSN (ROLLING_GRAPH_DSN, or `dsn` in config.toml) and that the server is up"
    logs = settings.home / "logs" / "pgserver.log"
    return f"see {logs}; `rgraph db start` retries; or set ROLLING_GRAPH_DSN to use your own PostgreSQL"


def connect(settings: Settings, *, autocommit: bool = False, start: bool = True) -> Connection:
    """An open connection with pgvector registered and the schema up to date.

    Raises :class:`DatabaseUnavailable` (with what to do) when the database cannot be reached
    or the DSN is not a valid PostgreSQL connection string.
    """
    target = resolve(settings, start=start)
    try:
        conn = psycopg.connect(target.dsn, autocommit=autocommit, connect_timeout=CONNECT_TIMEOUT_S)
    except psycopg.ProgrammingError as exc:  # e.g. ROLLING_GRAPH_DSN=garbage
        raise DatabaseUnavailable(f"the DSN {redact_dsn(target.dsn)!r} is not a PostgreSQL connection string ({_first_line(exc)}); {hint(settings)}") from exc
    except psycopg.Error as exc:
        raise DatabaseUnavailable(f"cannot connect to the warm graph ({target.kind}): {_first_line(exc)}; {hint(settings)}") from exc
    try:
        if target.dsn not in _migrated:
            ac = conn.autocommit
            conn.autocommit = False
            migrate.migrate(conn)
            conn.autocommit = ac
            _migrated.add(target.dsn)
        register_vector(conn)
    except Exception:
        conn.close()
        raise
    return conn


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def redact_dsn(dsn: str) -> str:
    """The DSN without its password, for status lines."""
    try:
        info = psycopg.conninfo.conninfo_to_dict(dsn)
    except psycopg.ProgrammingError:
        return "<unparseable DSN>"
    if "password" in info:
        info["password"] = "***"
    return psycopg.conninfo.make_conninfo(**{k: str(v) for k, v in info.items() if v is not None})


def status(settings: Settings) -> dict[str, Any]:
    """What database is in use and whether it answers (never starts the embedded server)."""
    out: dict[str, Any] = {"kind": "external" if settings.dsn else "embedded", "ok": False}
    if settings.dsn:
        out["dsn"] = redact_dsn(settings.dsn)
    else:
        out["pgdata"] = str(server.pg_dir(settings.home))
        info = server.running_info(settings.home)
        out["running"] = info is not None
        if info is None:
            out["detail"] = "embedded server not running (starts on first use, or `rgraph db start`)"
            return out
        out["pid"] = info.pid
        out["dsn"] = server.dsn_for(info)
    started = time.perf_counter()
    try:
        with connect(settings, start=False) as conn:
            row = conn.execute(
                "SELECT current_setting('server_version'), "
                "(SELECT extversion FROM pg_extension WHERE extname = 'vector'), "
                "(SELECT max(version) FROM schema_migrations), "
                "(SELECT count(*) FROM projects), (SELECT count(*) FROM nodes), (SELECT count(*) FROM edges)"
            ).fetchone()
    except (DatabaseUnavailable, psycopg.Error) as exc:
        out["detail"] = _first_line(exc)
        return out
    if row is None:  # a SELECT without FROM always returns its one row
        out["detail"] = "the server returned no row"
        return out
    out.update(
        ok=True,
        latency_ms=round((time.perf_counter() - started) * 1000, 1),
        server_version=row[0],
        pgvector=row[1],
        schema_version=row[2],
        projects=row[3],
        nodes=row[4],
        edges=row[5],
    )
    return out
