"""The hook server (rolling_graph.hook.serve): rgraph-hook hands its event to a fork of a
process that has our modules loaded, and answers exactly as it would have itself.

Each test runs its own copy of the rgraph-hook script (the server's address names the script),
so the server it starts is its own, stopped at the end.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from rolling_graph.hook import SERVER_IDLE_S

SCRIPT = Path(__file__).resolve().parents[1] / "plugin" / "hooks" / "rgraph-hook"
SID = "0b5e7c1e-3f7a-4d2e-9c61-5a1d2e3f4a5b"

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the hook server is Linux only (abstract sockets)")


def servers_of(script: Path) -> list[int]:
    """Pids of the hook servers (and their waiting forks) started from ``script``."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if str(script).encode() in argv and b"--serve" in argv and state not in ("Z", "X"):
            pids.append(int(entry.name))
    return pids


def address_of(script: Path) -> str:
    st, py = os.stat(script), os.stat(sys.executable)
    return f"\0rolling-graph-hook/{os.getuid()}/{st.st_ino:x}.{st.st_mtime_ns:x}/{py.st_ino:x}.{py.st_mtime_ns:x}"


def listening(address: str) -> bool:
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.connect(address)
        return True
    except OSError:
        return False
    finally:
        probe.close()  # (a waiting fork takes this empty connection and exits; the server makes another)


@pytest.fixture
def script(tmp_path: Path) -> Iterator[Path]:
    copy = tmp_path / "bin" / "rgraph-hook"
    copy.parent.mkdir()
    shutil.copy(SCRIPT, copy)
    yield copy
    for pid in servers_of(copy):
        os.kill(pid, 9)


def run(script: Path, event: str, payload: dict[str, object] | str, home: Path, **env: str) -> subprocess.CompletedProcess[bytes]:
    text = payload if isinstance(payload, str) else json.dumps(payload)
    inherited = {key: value for key, value in os.environ.items() if key != "ROLLING_GRAPH_HOOK_SERVER"}
    full = {**inherited, "ROLLING_GRAPH_HOME": str(home), "ROLLING_GRAPH_PROBE": "offline", **env}
    return subprocess.run([sys.executable, str(script), event], input=text.encode(), env=full, capture_output=True,
                          timeout=60, cwd=home)


def prompt(text: str, sid: str = SID) -> dict[str, object]:
    return {"session_id": sid, "transcript_path": "", "cwd": "/tmp", "hook_event_name": "UserPromptSubmit", "prompt": text}


def wait_for(condition, timeout_s: float = 20.0) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return False


def test_the_first_hook_runs_itself_and_starts_the_server_the_next_ones_are_served(script: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    first = run(script, "user-prompt-submit", prompt("We decided to use PostgreSQL for the warm store."), home)
    assert first.returncode == 0 and first.stderr == b"", first.stderr
    assert wait_for(lambda: listening(address_of(script))), "no hook server after the first hook"

    assert wait_for(lambda: len(servers_of(script)) == 2), "the server and its waiting fork"
    before = set(servers_of(script))
    served = run(script, "user-prompt-submit", prompt("Use PostgreSQL, as decided."), home)
    assert wait_for(lambda: len(servers_of(script)) == 2)
    after = set(servers_of(script))
    assert len(before & after) == 1, "the waiting fork took the hook (and exited), the server made the next one"
    alone = run(script, "user-prompt-submit", prompt("Use PostgreSQL, as decided."), home, ROLLING_GRAPH_HOOK_SERVER="off")
    assert served.returncode == alone.returncode == 0 and served.stderr == alone.stderr == b""
    state = json.loads((home / "sessions" / f"{SID}.state.json").read_text())
    assert state["counters"]["prompts"] == 3, "a served event is counted in the session like any other"
    # What each answered has the same shape (the ledger decides what is new: the second says less).
    for out in (served.stdout, alone.stdout):
        assert out == b"" or json.loads(out)["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"


def test_a_served_hook_keeps_the_contract_for_bad_input_and_its_own_environment(script: Path, tmp_path: Path) -> None:
    home, other = tmp_path / "home", tmp_path / "other-home"
    home.mkdir()
    other.mkdir()
    run(script, "stop", {"session_id": SID}, home)
    assert wait_for(lambda: listening(address_of(script)))

    bad = run(script, "user-prompt-submit", "not json", home)
    assert bad.returncode == 1 and bad.stdout == b"" and bad.stderr.startswith(b"rgraph-hook: hook input is not JSON")
    unknown = run(script, "no-such-event", {"session_id": SID}, home)
    assert unknown.returncode == 1 and b"expected one EVENT" in unknown.stderr
    # Each hook brings its own environment: this one's state lands in its own home.
    run(script, "user-prompt-submit", prompt("Look at the billing module.", sid="1c2d3e4f-0000-4000-8000-000000000001"), other)
    assert (other / "sessions" / "1c2d3e4f-0000-4000-8000-000000000001.state.json").exists()
    assert not (home / "sessions" / "1c2d3e4f-0000-4000-8000-000000000001.state.json").exists()
    assert servers_of(script), "the server stays for the next hook"


def test_off_means_no_server(script: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    done = run(script, "stop", {"session_id": SID}, home, ROLLING_GRAPH_HOOK_SERVER="off")
    time.sleep(0.5)
    assert done.returncode == 0 and servers_of(script) == [] and not listening(address_of(script))


def test_the_server_leaves_when_idle() -> None:
    assert 60 <= SERVER_IDLE_S <= 3600
