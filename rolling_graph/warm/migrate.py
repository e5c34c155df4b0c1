"""Versioned SQL migrations, applied automatically and idempotently.

Files ``rolling_graph/warm/migrations/NNN_name.sql`` run in order, each in its own transaction,
recorded in ``schema_migrations``. A transaction-level advisory lock serializes processes
that migrate at the same moment; the second one finds the work done.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from psycopg import Connection as _PgConnection
    from psycopg.rows import TupleRow

    Connection = _PgConnection[TupleRow]  # (warm.db names it too; it imports this module)

MIGRATIONS_DIR = Path(__file__).parent / "migrations"
#: Advisory lock key for migrations ("rgraph-m" as an int64).
MIGRATION_LOCK = 0x7267726170682D6D


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    sql: str


def available(directory: Path = MIGRATIONS_DIR) -> list[Migration]:
    found: list[Migration] = []
    for path in sorted(directory.glob("*.sql")):
        head, _, rest = path.stem.partition("_")
        if head.isdigit():
            found.append(Migration(int(head), rest or path.stem, path.read_text(encoding="utf-8")))
    versions = [m.version for m in found]
    if len(versions) != len(set(versions)):
        raise RuntimeError(f"duplicate migration versions in {directory}")
    return sorted(found, key=lambda m: m.version)


def applied_versions(conn: Connection) -> set[int]:
    (exists,) = conn.execute("SELECT to_regclass('schema_migrations') IS NOT NULL").fetchone() or (False,)
    if not exists:
        return set()
    return {row[0] for row in conn.execute("SELECT version FROM schema_migrations")}


def migrate(conn: Connection, directory: Path = MIGRATIONS_DIR) -> list[int]:
    """Apply pending migrations; return the versions applied now (empty when up to date)."""
    pending = [m for m in available(directory) if m.version not in applied_versions(conn)]
    conn.commit()
    if not pending:
        return []
    done: list[int] = []
    for migration in pending:
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
            conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations ("
                " version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())"
            )
            if conn.execute("SELECT 1 FROM schema_migrations WHERE version = %s", (migration.version,)).fetchone():
                continue
            conn.execute(migration.sql)
            conn.execute(
                "INSERT INTO schema_migrations (version, name) VALUES (%s, %s)", (migration.version, migration.name)
            )
            done.append(migration.version)
    return done
