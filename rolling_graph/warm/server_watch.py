"""Stop the embedded PostgreSQL once nobody has used it for a while.

Whoever starts the embedded server (a detached reconcile, a pull, a command) starts this
watchdog beside it, detached. Every few seconds it counts the server's client connections
other than its own; after ``idle_s`` seconds with none it stops the server and exits. It also
exits as soon as the server is gone (``rgraph db stop``, a crash). So a session leaves no
server behind for longer than the idle time, and one server serves a whole state directory.

    python -m rolling_graph.warm.server_watch --home DIR --idle SECONDS
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import psycopg

from rolling_graph.core.detach import lower_priority, python_module, spawn_detached
from rolling_graph.warm import server

#: Default idle time before the embedded server is stopped (``[db] idle_stop_s``).
DEFAULT_IDLE_S = 600.0

_CLIENTS_SQL = (
    "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()"
)


def client_count(info: server.PostmasterInfo) -> int:
    """Client connections to the server other than this one's."""
    with psycopg.connect(server.dsn_for(info, "postgres"), autocommit=True, connect_timeout=5) as conn:
        row = conn.execute(_CLIENTS_SQL).fetchone()
    return int(row[0]) if row else 0


def watch(home: Path, idle_s: float, poll_s: float | None = None) -> str:
    """Run until the server stops or has been idle ``idle_s`` seconds; returns why it ended."""
    poll = poll_s if poll_s is not None else max(0.2, min(5.0, idle_s / 4))
    idle_since = time.monotonic()
    first_pid: int | None = None
    while True:
        info = server.running_info(home)
        if info is None or (first_pid is not None and info.pid != first_pid):
            return "server gone"  # stopped by someone else; a restart brings its own watchdog
        first_pid = info.pid
        try:
            busy = client_count(info) > 0
        except psycopg.Error:
            busy = True  # starting up or refusing: not idle
        now = time.monotonic()
        if busy:
            idle_since = now
        elif now - idle_since >= idle_s:
            server.stop(home)
            return "stopped after idle"
        time.sleep(poll)


def start_watchdog(home: Path, idle_s: float) -> int:
    """Start :func:`watch` for the server under ``home``, detached; returns its pid."""
    return spawn_detached(
        python_module("rolling_graph.warm.server_watch"),
        ["--home", os.fspath(home), "--idle", str(idle_s)],
        home / "logs" / "server-watch.log",
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rolling_graph.warm.server_watch", description=__doc__)
    parser.add_argument("--home", required=True, type=Path)
    parser.add_argument("--idle", type=float, default=DEFAULT_IDLE_S)
    args = parser.parse_args(argv)
    lower_priority()
    why = watch(args.home, args.idle)
    print(f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} server watch for {args.home}: {why}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
