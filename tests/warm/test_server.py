"""The embedded server is known by what its pid runs, never by the pid alone (issue 36, case 2):
a stale ``postmaster.pid`` whose pid another process took by now is cleared, ``db stop`` never
signals that process, and a killed server its parent has not reaped yet counts as stopped.
Real embedded PostgreSQL throughout."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
import warm_support as ws

from rolling_graph.warm import db, server

pytestmark = pytest.mark.db


@pytest.fixture()
def home() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix=f"rgsv-{os.getpid()}-", dir="/tmp"))
    try:
        yield path
    finally:
        server.stop(path)
        shutil.rmtree(path, ignore_errors=True)


def _pidfile_naming(home: Path, text: str, pid: int) -> None:
    """Write ``postmaster.pid`` as an unclean death leaves it (``text``), with ``pid`` in it."""
    lines = text.splitlines()
    lines[0] = str(pid)
    (server.pg_dir(home) / "postmaster.pid").write_text("\n".join(lines) + "\n", encoding="utf-8")


def _kill_hard(home: Path) -> str:
    """SIGKILL the server's postmaster and wait for its children to notice and go; returns
    the ``postmaster.pid`` it left."""
    info = server.running_info(home)
    assert info is not None
    text = (server.pg_dir(home) / "postmaster.pid").read_text(encoding="utf-8")
    os.kill(info.pid, signal.SIGKILL)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and subprocess.run(["pgrep", "-f", f"-D {server.pg_dir(home)}"], capture_output=True,
                                                          check=False).returncode == 0:
        time.sleep(0.1)
    (server.pg_dir(home) / "postmaster.pid").write_text(text, encoding="utf-8")  # as an unclean death leaves it
    return text


def _answers(dsn: str) -> bool:
    with psycopg.connect(dsn, connect_timeout=10) as conn:
        return conn.execute("SELECT 1").fetchone() == (1,)


def test_a_stale_pid_file_whose_pid_another_process_took_is_cleared_and_never_signalled(home: Path) -> None:
    server.ensure_running(home)
    left = _kill_hard(home)
    bystander = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])  # took the dead server's pid
    try:
        _pidfile_naming(home, left, bystander.pid)

        assert server.running_info(home) is None
        assert db.status(ws.settings_for(home, None))["running"] is False
        assert server.stop(home) is False  # `rgraph db stop`: not our server, not signalled
        assert bystander.poll() is None

        _pidfile_naming(home, left, bystander.pid)
        dsn = server.ensure_running(home)  # `rgraph db start`: the stale file is cleared, a new server starts
        info = server.running_info(home)
        assert info is not None and info.pid != bystander.pid and _answers(dsn)
        assert db.status(ws.settings_for(home, None))["ok"]
        assert bystander.poll() is None
    finally:
        bystander.kill()
        bystander.wait()


def test_a_killed_server_its_parent_has_not_reaped_counts_as_not_running(home: Path) -> None:
    server.ensure_running(home)
    server.stop(home)  # a data directory, and no server
    pgdata = server.pg_dir(home)
    user = "pgserver" if os.geteuid() == 0 else None
    postmaster = subprocess.Popen(
        [str(server._pg_bin("postgres")), "-D", str(pgdata), "-h", "", "-k", str(pgdata)],
        user=user, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while server.running_info(home) is None:
            assert time.monotonic() < deadline, "the postmaster did not become ready"
            time.sleep(0.05)
        assert server.running_info(home).pid == postmaster.pid  # type: ignore[union-attr]
        _kill_hard(home)  # this process is its parent and does not wait(): a zombie

        # (A killed process's command line goes before its state turns Z: pgrep in _kill_hard
        # may stop looking a moment before the kernel has made it a zombie.)
        deadline = time.monotonic() + 10
        while not Path(f"/proc/{postmaster.pid}/stat").read_text().split(") ")[1].startswith("Z"):
            assert time.monotonic() < deadline, "the killed postmaster did not become a zombie"
            time.sleep(0.01)
        assert server.running_info(home) is None
        dsn = server.ensure_running(home)  # a rerun right after the kill starts a server of its own
        assert _answers(dsn) and server.running_info(home).pid != postmaster.pid  # type: ignore[union-attr]
    except BaseException:
        print((pgdata / "log").read_text(encoding="utf-8")[-3000:])
        raise
    finally:
        postmaster.wait()


def test_a_process_is_our_server_only_by_its_executable_and_data_directory(home: Path) -> None:
    server.ensure_running(home)
    info = server.running_info(home)
    assert info is not None
    assert server.is_our_server(info.pid, server.pg_dir(home))
    assert not server.is_our_server(info.pid, home / "elsewhere")  # another state directory's server is not ours
    assert not server.is_our_server(os.getpid(), server.pg_dir(home))  # not a postgres


def test_a_killed_evaluation_still_stops_the_server_it_started(home: Path) -> None:
    # `kill` of `rgraph eval --chain` or of a corpus benchmark (SIGTERM) skipped the `finally`
    # that stops its embedded PostgreSQL: two were left running after this round's evaluations.
    script = (
        "import sys, time\nfrom pathlib import Path\nfrom rolling_graph.warm import server\n"
        "server.exit_on_terminate()\nhome = Path(sys.argv[1])\n"
        "try:\n    server.ensure_running(home)\n    print('up', flush=True)\n    time.sleep(120)\n"
        "finally:\n    server.stop(home)\n"
    )
    child = subprocess.Popen([sys.executable, "-c", script, str(home)], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "up"
        assert server.running_info(home) is not None
        child.send_signal(signal.SIGTERM)
        assert child.wait(timeout=60) == 128 + signal.SIGTERM
        assert server.running_info(home) is None
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
