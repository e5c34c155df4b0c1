"""The embedded PostgreSQL (``pgserver`` wheel: PostgreSQL 16 + pgvector) under ``$ROLLING_GRAPH_HOME/pg``.

Started on demand, shared by every session and process of one state directory, and stopped
after it has been idle ``[db] idle_stop_s`` seconds (:mod:`rolling_graph.warm.server_watch`)
or by ``rgraph db stop``; an ``rgraph`` command stops a server it started itself before it exits. Attaching to a running server only reads ``postmaster.pid``
(no ``pgserver`` import, ~1 ms). Starting goes through our own ``fcntl`` lock because two
processes doing pgserver's first start at once race on its ``mkdir``. pgserver prints an
``XDG_RUNTIME_DIR`` warning on stderr: while it runs, fd 2 points at the server log so no
user or hook ever sees it.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from rolling_graph.core.detach import pid_alive
from rolling_graph.core.errors import RollingGraphError

DB_NAME = "rolling_graph"
START_TIMEOUT_S = 30.0


class EmbeddedServerError(RollingGraphError, RuntimeError):
    """The embedded server could not be started; the message says what to do."""


@dataclass(frozen=True)
class PostmasterInfo:
    pid: int
    data_dir: str
    port: int
    socket_dir: str
    status: str


def pg_dir(home: Path) -> Path:
    return home / "pg"


def _lock_path(home: Path) -> Path:
    return home / "pg.lock"


def read_postmaster(pgdata: Path) -> PostmasterInfo | None:
    """Parse ``postmaster.pid`` (PostgreSQL's own lock file); None when absent or torn."""
    try:
        lines = (pgdata / "postmaster.pid").read_text(encoding="utf-8").splitlines()
        return PostmasterInfo(
            pid=int(lines[0]),
            data_dir=lines[1],
            port=int(lines[3]),
            socket_dir=lines[4].strip(),
            status=lines[7].strip() if len(lines) > 7 else "",
        )
    except (OSError, ValueError, IndexError):
        return None


_PROC = Path("/proc")


def _same_dir(a: str, b: Path) -> bool:
    try:
        return os.path.realpath(a) == os.path.realpath(b)
    except OSError:
        return False


def is_our_server(pid: int, pgdata: Path) -> bool:
    """Whether ``pid`` is a live PostgreSQL postmaster serving ``pgdata``: by what the pid
    runs, never by the pid alone (after an unclean death the pid in a stale
    ``postmaster.pid`` may belong to any other process by now). Read from ``/proc``: a
    ``postgres`` executable whose ``-D`` argument or working directory (the postmaster
    works in its data directory) is ``pgdata``. A zombie (killed, not yet reaped) is not
    running. Without ``/proc`` (not Linux) only the pid can be checked."""
    if pid <= 0:
        return False
    proc = _PROC / str(pid)
    if not _PROC.is_dir() or not (_PROC / "self").exists():
        return pid_alive(pid)
    try:
        stat = (proc / "stat").read_text(encoding="utf-8", errors="replace")
        if stat[stat.rindex(")") + 2 :].startswith(("Z", "X")):  # zombie or dead: not running
            return False
        argv = [a.decode("utf-8", "replace") for a in (proc / "cmdline").read_bytes().split(b"\0")]
    except (OSError, ValueError):
        return False
    if not argv or os.path.basename(argv[0]) not in {"postgres", "postmaster"}:
        return False
    data_args = [argv[i + 1] for i, a in enumerate(argv[:-1]) if a == "-D"]
    if any(_same_dir(d, pgdata) for d in data_args):
        return True
    try:
        return _same_dir(os.readlink(proc / "cwd"), pgdata)
    except OSError:
        return False


def running_info(home: Path) -> PostmasterInfo | None:
    """The running embedded server's postmaster info, or None (no ``postmaster.pid``, or
    one whose pid is not our server: :func:`is_our_server`)."""
    info = read_postmaster(pg_dir(home))
    if info is None or info.status != "ready" or not info.socket_dir or not is_our_server(info.pid, pg_dir(home)):
        return None
    return info


def clear_stale_pidfile(home: Path) -> bool:
    """Remove ``postmaster.pid`` when no server of ours runs under its pid (an unclean death:
    PostgreSQL and pgserver would both take the reused pid for a running server and refuse to
    start, or attach to nothing). Call under the start lock. Returns whether it removed one."""
    pidfile = pg_dir(home) / "postmaster.pid"
    info = read_postmaster(pg_dir(home))
    if not pidfile.exists() or (info is not None and is_our_server(info.pid, pg_dir(home))):
        return False
    if info is None:  # torn or half-written: a starting server writes it whole within moments
        try:
            if time.time() - pidfile.stat().st_mtime < START_TIMEOUT_S:
                return False
        except OSError:
            return False
    _clear_socket_locks(home, info.socket_dir if info is not None and info.socket_dir else str(pg_dir(home)))
    with contextlib.suppress(FileNotFoundError):
        pidfile.unlink()
    return True


def _clear_socket_locks(home: Path, socket_dir: str) -> None:
    """Remove the socket lock files (``.s.PGSQL.<port>.lock``) of a server that is gone, and
    their sockets: PostgreSQL takes the pid in one for a running postmaster when a zombie or
    another process holds that pid, and refuses to start."""
    directory = Path(socket_dir)
    for lock in directory.glob(".s.PGSQL.*.lock"):
        try:
            pid = int(lock.read_text(encoding="utf-8").splitlines()[0])
        except (OSError, ValueError, IndexError):
            continue
        if not is_our_server(pid, pg_dir(home)):
            with contextlib.suppress(FileNotFoundError):
                lock.unlink()
            with contextlib.suppress(FileNotFoundError):
                (directory / lock.name.removesuffix(".lock")).unlink()


def dsn_for(info: PostmasterInfo, database: str = DB_NAME) -> str:
    return f"postgresql://postgres@/{database}?host={quote(info.socket_dir, safe='/')}&port={info.port}"


@contextlib.contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


@contextlib.contextmanager
def _stderr_to(path: Path) -> Iterator[None]:
    """Point fd 2 (and so every child's stderr) at ``path`` for the duration."""
    path.parent.mkdir(parents=True, exist_ok=True)
    saved = os.dup(2)
    with open(path, "ab") as log:
        os.dup2(log.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)


def _start_with_pgserver(pgdata: Path, log: Path) -> None:
    with _stderr_to(log):
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import pgserver  # heavy: psutil, platformdirs, fasteners

            # pgserver caches a handle per data directory for the life of the process, and
            # hands back the cached one without starting anything: a server this process
            # started and that died since (killed, stopped by another process) never came back.
            cache = getattr(getattr(pgserver, "PostgresServer", None), "_instances", None)
            if isinstance(cache, dict):
                for key in [k for k in cache if _same_dir(str(k), pgdata)]:
                    del cache[key]
            pgserver.get_server(pgdata, cleanup_mode=None)


def _ensure_database(info: PostmasterInfo) -> None:
    import psycopg

    with psycopg.connect(dsn_for(info, "postgres"), autocommit=True, connect_timeout=10) as conn:
        found = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (DB_NAME,)).fetchone()
        if not found:
            with contextlib.suppress(psycopg.errors.DuplicateDatabase):
                conn.execute(f'CREATE DATABASE "{DB_NAME}"')


#: State directories whose embedded server this process started (see :func:`stop_started_here`).
STARTED_HERE: set[Path] = set()


def ensure_running(home: Path) -> str:
    """Start the embedded server if needed and return a DSN for our database.

    Safe to call from many processes at once: the fast path only reads ``postmaster.pid``;
    the slow path serializes behind ``$ROLLING_GRAPH_HOME/pg.lock``. A server this call
    starts is recorded in :data:`STARTED_HERE`.
    """
    info = running_info(home)
    if info is not None:
        return dsn_for(info)
    home.mkdir(parents=True, exist_ok=True)
    with _file_lock(_lock_path(home)):
        info = running_info(home)
        if info is None:
            STARTED_HERE.add(home)
            _wait_gone(home)
            clear_stale_pidfile(home)
            try:
                _start_with_pgserver(pg_dir(home), home / "logs" / "pgserver.log")
            except Exception as exc:  # noqa: BLE001 - pgserver raises many kinds
                raise EmbeddedServerError(
                    f"could not start the embedded PostgreSQL under {pg_dir(home)} ({type(exc).__name__}: {exc}); "
                    f"see {home / 'logs' / 'pgserver.log'} and {pg_dir(home) / 'log'}, or set ROLLING_GRAPH_DSN"
                ) from exc
            deadline = time.monotonic() + START_TIMEOUT_S
            while (info := running_info(home)) is None:
                if time.monotonic() > deadline:
                    raise EmbeddedServerError(f"embedded PostgreSQL under {pg_dir(home)} did not become ready")
                time.sleep(0.05)
        _ensure_database(info)
    return dsn_for(info)


def stop(home: Path, timeout_s: float = 20.0) -> bool:
    """Stop the embedded server (fast shutdown). Returns False when it was not running."""
    STARTED_HERE.discard(home)
    with _file_lock(_lock_path(home)):
        info = running_info(home)
        if info is None:
            clear_stale_pidfile(home)
            return False
        import subprocess

        pgdata = pg_dir(home)
        pg_ctl = _pg_bin("pg_ctl")
        user = "pgserver" if os.geteuid() == 0 else None
        with open(os.devnull, "wb") as null:
            result = subprocess.run(
                [str(pg_ctl), "-D", str(pgdata), "-m", "fast", "-w", "-t", str(int(timeout_s)), "stop"],
                stdout=null,
                stderr=null,
                user=user,
                check=False,
            )
        if result.returncode != 0 and is_our_server(info.pid, pgdata):  # never a process that is not our server
            os.kill(info.pid, 15)
        deadline = time.monotonic() + timeout_s
        while is_our_server(info.pid, pgdata) and time.monotonic() < deadline:
            time.sleep(0.05)
        return True


def _wait_gone(home: Path, timeout_s: float = 5.0) -> None:
    """Let a server that is shutting down (its pid file says so, its process still runs)
    finish before a new one starts on the same data directory."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        info = read_postmaster(pg_dir(home))
        if info is None or info.status == "ready" or not is_our_server(info.pid, pg_dir(home)):
            return
        time.sleep(0.05)


def exit_on_terminate() -> None:
    """Make SIGTERM raise :class:`SystemExit` in this (main) thread, so the ``finally`` blocks
    that stop the servers this process started run: a plain ``kill`` of an evaluation or a
    benchmark otherwise leaves its embedded PostgreSQL running. A no-op off the main thread."""
    import signal
    import threading

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _terminated)


def _terminated(signum: int, _frame: object) -> None:
    raise SystemExit(128 + signum)


def stop_started_here() -> list[Path]:
    """Stop every embedded server this process started; returns their state directories.

    ``rgraph`` calls it on exit: a command leaves nothing running that it did not find running."""
    return [home for home in sorted(STARTED_HERE) if stop(home)]


def _pg_bin(name: str) -> Path:
    import importlib.util

    spec = importlib.util.find_spec("pgserver")
    if spec is None or spec.origin is None:
        raise EmbeddedServerError("the pgserver package is not installed; pip install pgserver or set ROLLING_GRAPH_DSN")
    return Path(spec.origin).parent / "pginstall" / "bin" / name
