"""One atomic write for every file of state (issue 36, case 4): a short write raises and the
old file stays as it was, with no temp file left behind; no module renames files of its own."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rolling_graph.store import atomic

PACKAGE = Path(__file__).resolve().parents[2] / "rolling_graph"
OLD = b"old line of state\n" * 1112 + b"x" * 13  # 20,009 bytes, as in the report
NEW = b"new line of state\n" * 1700  # 30,600 bytes: more than ulimit -f 8 lets a process write

#: What each writer does under a file-size limit of 8 KiB; ``target`` already holds OLD.
WRITERS = {
    "write_atomic": "from rolling_graph.store.atomic import write_atomic; write_atomic(target, new)",
    "write_atomic_volatile": "from rolling_graph.store.atomic import write_atomic; write_atomic(target, new, durable=False)",
    "usage": "from rolling_graph.probe.usage import _atomic_write; _atomic_write(Path(target), {'pad': new.decode()})",
    "snapshot": (
        "from rolling_graph.warm import snapshot_write as sw; sw.snapshot_path = lambda h, r: Path(target); "
        "sw.write_snapshot(home, '/p', {'pad': new.decode()})"
    ),
    "view": "from rolling_graph.cli.view import write_atomic; write_atomic(Path(target), new.decode())",
    "queue_rewrite": "from rolling_graph.replay.recover import _rewrite; _rewrite(Path(target), {'pad': new.decode()})",
}


def _run_limited(code: str, target: Path, blocks: int = 8) -> subprocess.CompletedProcess[str]:
    script = (
        "import sys; from pathlib import Path\n"
        f"target = {str(target)!r}; home = {str(target.parent)!r}; new = {NEW!r}\n"
        "try:\n"
        f"    {code}\n"
        "except OSError as exc:\n"
        "    print('raised', type(exc).__name__); sys.exit(3)\n"
    )
    return subprocess.run(
        ["bash", "-c", f'ulimit -f {blocks}; exec "$0" -c "$1"', sys.executable, script],
        capture_output=True, text=True, timeout=60, check=False,
    )


@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_a_write_cut_short_by_the_file_size_limit_raises_and_leaves_the_old_file_whole(tmp_path: Path, writer: str) -> None:
    target = tmp_path / "state.json"
    target.write_bytes(OLD)

    proc = _run_limited(WRITERS[writer], target)

    assert proc.returncode == 3 and "raised" in proc.stdout, (proc.stdout, proc.stderr)
    assert target.read_bytes() == OLD  # never the first 8,192 bytes of the new one
    assert sorted(p.name for p in tmp_path.iterdir()) == ["state.json"]  # the temp file is gone


def test_a_short_os_write_is_retried_until_every_byte_is_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "graph.json"
    real = os.write
    monkeypatch.setattr(atomic.os, "write", lambda fd, data: real(fd, bytes(data[:1000])))  # 1,000 bytes a call

    atomic.write_atomic(str(target), NEW)

    assert target.read_bytes() == NEW


def test_a_write_that_makes_no_progress_raises_and_keeps_the_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "graph.json"
    target.write_bytes(OLD)
    real = os.write
    calls = iter([8192])
    monkeypatch.setattr(atomic.os, "write", lambda fd, data: real(fd, bytes(data[: next(calls, 0)])))

    with pytest.raises(OSError, match="short write"):
        atomic.write_atomic(str(target), NEW)

    assert target.read_bytes() == OLD and [p.name for p in tmp_path.iterdir()] == ["graph.json"]


def test_concurrent_writers_of_one_file_in_one_process_use_their_own_temp_files(tmp_path: Path) -> None:
    import threading

    target = tmp_path / "q.json"
    payloads = [bytes([65 + i]) * 50_000 for i in range(8)]
    threads = [threading.Thread(target=atomic.write_atomic, args=(str(target), p)) for p in payloads]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    assert target.read_bytes() in payloads  # one writer's whole file, never two mixed
    assert [p.name for p in tmp_path.iterdir()] == ["q.json"]


def test_a_temp_file_a_killed_writer_left_is_cleaned_by_its_pid(tmp_path: Path) -> None:
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True)
    left = tmp_path / f"s.state.json.0a1b2c3d.tmp.{int(dead.stdout)}"
    left.write_bytes(b"{")

    assert atomic.clean_stale_temp(str(tmp_path), "s.") == [left.name]


def test_no_module_installs_a_file_by_a_rename_of_its_own() -> None:
    """Every file of state goes through :func:`rolling_graph.store.atomic.write_atomic`:
    ``os.replace``/``os.rename``/``mkstemp`` appear only there, and in the moves of a whole
    existing file (the queue's failed entries, the hook log's rotation) and the scratch file an editor opens."""
    moves = {("replay/recover.py", "replace"), ("hook.py", "replace"), ("graduation/review_prompt.py", "mkstemp")}  # + an editor scratch file
    found = set()
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr in {"replace", "rename", "mkstemp"} and isinstance(node.value, ast.Name) \
                    and node.value.id in {"os", "tempfile"}:
                found.add((rel, node.attr))
    assert found - moves == {("store/atomic.py", "replace")}
