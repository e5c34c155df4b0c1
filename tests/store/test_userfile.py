"""Every read of a path someone else named is bounded in size and time, and only of a regular file.

Issue 17, item 4. ``SessionStart(compact)`` with ``transcript_path`` = ``/dev/zero`` read it
without limit (7.5 GB of memory in 6 s). The same paths reach the probe (the transcript's tail,
for the assistant's text), ``rgraph recover``'s scan for orphan transcripts, and the project
lookup (a ``.git`` file in the payload's ``cwd``). Each is tried here with ``/dev/zero``, a
FIFO nobody writes to (an ``open`` that would block forever), a directory and a huge sparse
file. The hooks run with their address space capped, so an unbounded read fails loudly
instead of taking the machine's memory.
"""

from __future__ import annotations

import os
import resource
import time
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest
from conftest import HOOK, prompt_payload

from rolling_graph.core.config import load_settings
from rolling_graph.replay.recover import orphan_transcripts
from rolling_graph.store.sidecar import SidecarStore
from rolling_graph.store.userfile import read_regular, read_tail

#: Address space a hook gets here: far more than it needs, far less than an endless read takes.
AS_LIMIT = 1 << 30
#: Seconds a hook may take with any of these paths (it takes a fraction of one).
HOOK_TIMEOUT = 20


def _capped() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (AS_LIMIT, AS_LIMIT))


def run_capped(event: str, payload: Mapping[str, object]) -> tuple[int, float, str]:
    import json
    import subprocess

    t0 = time.monotonic()
    proc = subprocess.run([HOOK, event], input=json.dumps(payload).encode(), capture_output=True,
                          env=dict(os.environ), timeout=HOOK_TIMEOUT, preexec_fn=_capped)  # noqa: PLW1509 - a test's child
    return proc.returncode, time.monotonic() - t0, proc.stderr.decode(errors="replace")


def hook_log(home: Path) -> str:
    log = home / "logs" / "hook.log"
    return log.read_text() if log.exists() else ""


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "session.jsonl"
    os.mkfifo(path)
    return path


@pytest.fixture
def sparse(tmp_path: Path) -> Path:
    path = tmp_path / "huge.jsonl"
    with open(path, "wb") as fh:
        fh.truncate(64 << 30)  # 64 GiB, no block of it written
    return path


KINDS: dict[str, Callable[[Path], str]] = {
    "dev-zero": lambda tmp: "/dev/zero",
    "fifo": lambda tmp: str(tmp / "session.jsonl"),
    "directory": lambda tmp: str(tmp),
    "sparse": lambda tmp: str(tmp / "huge.jsonl"),
}


@pytest.mark.parametrize("kind", list(KINDS))
def test_a_compaction_whose_transcript_is_no_transcript_reads_almost_nothing(
    kind: str, isolated_home: Path, tmp_path: Path, fifo: Path, sparse: Path
) -> None:
    payload = {"session_id": f"compact-{kind}", "cwd": str(tmp_path), "hook_event_name": "SessionStart",
               "source": "compact", "transcript_path": KINDS[kind](tmp_path)}
    code, took, stderr = run_capped("session-start", payload)
    assert code == 0 and not stderr
    assert took < HOOK_TIMEOUT / 2
    assert "Traceback" not in hook_log(isolated_home)
    assert SidecarStore(load_settings()).exists(f"compact-{kind}")  # the session went on


@pytest.mark.parametrize("kind", list(KINDS))
def test_the_probe_reads_the_assistants_text_only_from_a_regular_file(
    kind: str, isolated_home: Path, tmp_path: Path, fifo: Path, sparse: Path
) -> None:
    """The prompt fires the (synchronous) probe, which reads the transcript's tail."""
    payload = prompt_payload(f"tail-{kind}", "Let's use Kafka for events.", cwd=str(tmp_path), transcript_path=KINDS[kind](tmp_path))
    code, took, stderr = run_capped("user-prompt-submit", payload)
    assert code == 0 and not stderr
    assert took < HOOK_TIMEOUT / 2
    assert "Traceback" not in hook_log(isolated_home)
    assert "use-kafka-for-events" in SidecarStore(load_settings()).load(f"tail-{kind}")["nodes"]


def test_a_git_pointer_that_is_a_fifo_does_not_block_the_project_lookup(isolated_home: Path, tmp_path: Path) -> None:
    project = tmp_path / "worktree"
    project.mkdir()
    os.mkfifo(project / ".git")
    code, took, stderr = run_capped("session-start", {"session_id": "git-fifo", "cwd": str(project), "source": "startup"})
    assert code == 0 and not stderr and took < HOOK_TIMEOUT / 2
    assert SidecarStore(load_settings()).project("git-fifo") == str(project)


def test_recover_replays_only_regular_transcripts_of_a_transcripts_size(tmp_path: Path, fifo: Path, sparse: Path) -> None:
    projects = tmp_path / "projects"
    folder = projects / "-home-dev-app"
    folder.mkdir(parents=True)
    good = folder / "1b0c7e2a-0000-4000-8000-000000000001.jsonl"
    good.write_text('{"type": "user", "sessionId": "1b0c7e2a-0000-4000-8000-000000000001"}\n')
    os.mkfifo(folder / "1b0c7e2a-0000-4000-8000-000000000002.jsonl")
    (folder / "1b0c7e2a-0000-4000-8000-000000000003.jsonl").symlink_to("/dev/zero")
    (folder / "1b0c7e2a-0000-4000-8000-000000000004.jsonl").mkdir()
    os.link(sparse, folder / "1b0c7e2a-0000-4000-8000-000000000005.jsonl")
    assert orphan_transcripts(load_settings(), projects) == [good]


def test_read_regular_refuses_what_is_not_a_regular_file_and_reads_at_most_the_limit(tmp_path: Path, fifo: Path, sparse: Path) -> None:
    for path in ("/dev/zero", str(fifo), str(tmp_path), str(tmp_path / "missing"), "bad\0path"):
        assert read_regular(path, 1024) is None
    data, offset, size = read_regular(str(sparse), 4096) or (b"", 0, 0)
    assert (len(data), offset, size) == (4096, (64 << 30) - 4096, 64 << 30)
    small = tmp_path / "small.txt"
    small.write_bytes(b"0123456789")
    assert read_tail(str(small), 4) == b"6789"
    assert read_regular(str(small), 4, 3) == (b"3456", 3, 10)
    assert read_regular(str(small), 4, 50) == (b"", 10, 10)
