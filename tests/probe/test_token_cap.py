"""The daily token cap holds across concurrent sessions, and a killed probe's call is counted
(issue 36, cases 3 and 7). Real probe processes, a local stand-in of the Messages API in its
own wire format; nothing reaches the network.

Case 3: cap 8,000, six sessions probing at once, each passed the check before any recorded
its spend: 21,000 tokens were spent. Case 7: a killed probe's call was never counted, and its
batch was sent again.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest
from conftest import prompt_payload, tool_payload
from probe_support import envelope, serving

from rolling_graph import hook
from rolling_graph.core.config import load_settings
from rolling_graph.probe import runner, usage
from rolling_graph.probe.anthropic_probe import AnthropicProbe
from rolling_graph.store.journal import read_journal
from rolling_graph.store.sidecar import SidecarStore

SESSIONS = 6
DELAY_S = 4.0  # every probe's call is in flight at once


class FakeMessages:
    """``POST /v1/messages`` answered with a recorded tool_use message after ``delay``
    seconds (``hang``: never, until released), reporting ``usage`` as given."""

    def __init__(self, tokens_in: int, tokens_out: int) -> None:
        self.served: list[float] = []
        self.delay = DELAY_S
        self.hang = threading.Event()
        self.release = threading.Event()
        self.usage = {"input_tokens": tokens_in, "output_tokens": tokens_out}
        self.lock = threading.Lock()

    def handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                self.rfile.read(int(self.headers.get("content-length", 0)))
                with fake.lock:
                    fake.served.append(time.monotonic())
                if fake.hang.is_set():
                    fake.release.wait(60)
                    return
                time.sleep(fake.delay)
                reply = envelope("anthropic_good.json")
                body = dict(reply["body"], usage=fake.usage)
                data = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        return Handler


@pytest.fixture()
def env_for(isolated_home: Path) -> Iterator[Any]:
    def make(url: str) -> dict[str, str]:
        return dict(os.environ, ROLLING_GRAPH_PROBE="anthropic", ANTHROPIC_API_KEY="sk-ant-api03-test-key-not-real",
                    ANTHROPIC_BASE_URL=url, ROLLING_GRAPH_PROBE_MODE="sync")
    yield make


def _queue(sid: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """One decision and an edit queued for the session's probe (not yet probed)."""
    settings = load_settings()
    with monkeypatch.context() as m:
        m.setattr(hook, "_start_probe", lambda *a: None)
        m.setenv("ROLLING_GRAPH_PROBE", "offline")
        hook.handle_event("user-prompt-submit", prompt_payload(sid, "Let's use PostgreSQL for the warm store, not SQLite."), settings)
        edit = {"file_path": "/home/dev/app/store.py", "old_string": "sqlite", "new_string": "postgresql"}
        hook.handle_event("post-tool-use", tool_payload(sid, "Edit", edit, {"filePath": "store.py"}), settings)
    assert SidecarStore(settings).load_state(sid)["gate"]["pending"]


def _reservation(sid: str) -> int:
    """What one of these sessions' calls reserves: its maximum cost."""
    settings = load_settings()
    store = SidecarStore(settings)
    pending = store.load_state(sid)["gate"]["pending"]
    return AnthropicProbe(settings).max_call_tokens(pending, store.load(sid))


def _probe(sid: str, env: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "rolling_graph.probe.runner", "--session", sid], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def test_six_sessions_probing_at_once_never_spend_past_the_daily_cap(
    isolated_home: Path, env_for: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    sids = [f"cap-{i}" for i in range(SESSIONS)]
    for sid in sids:
        _queue(sid, monkeypatch)
    most = max(_reservation(sid) for sid in sids)
    cap = 2 * most + most // 2  # room for two calls' maximum, not three
    (isolated_home / "config.toml").write_text(f"[probe]\ndaily_token_cap = {cap}\nsession_token_cap = 0\ntimeout_s = 20.0\n")
    fake = FakeMessages(tokens_in=most - 600, tokens_out=500)  # each call costs a little less than its maximum

    with serving(fake.handler()) as url:
        procs = [_probe(sid, env_for(url)) for sid in sids]
        errors = [p.communicate(timeout=180)[1].decode() for p in procs]

    assert [p.returncode for p in procs] == [0] * SESSIONS, errors
    settings = load_settings()
    day = usage.read_day(settings)
    assert len(fake.served) <= 2, f"{len(fake.served)} calls of up to {most:,} tokens under a cap of {cap:,}"
    assert usage.daily_tokens(settings) <= cap and int(day["tokens_in"]) + int(day["tokens_out"]) <= cap
    assert not day.get("reservations")  # every reservation settled
    reasons = [f"{e.get('fallback_reason')} {e.get('selected_because')}" for sid in sids for e in read_journal(SidecarStore(settings).journal_path(sid))]
    assert sum("cap reached" in r for r in reasons) >= SESSIONS - 2  # the others were told why, and answered offline
    assert all(SidecarStore(settings).load_state(sid)["gate"]["pending"] == [] for sid in sids)


def test_a_probe_killed_during_its_call_is_counted_and_its_batch_is_not_sent_again(
    isolated_home: Path, env_for: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    _queue("killed", monkeypatch)
    most = _reservation("killed")
    fake = FakeMessages(tokens_in=most - 600, tokens_out=500)
    fake.hang.set()

    with serving(fake.handler()) as url:
        proc = _probe("killed", env_for(url))
        deadline = time.monotonic() + 60
        while not fake.served:
            assert time.monotonic() < deadline and proc.poll() is None, "the probe never called the model"
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        fake.release.set()
        fake.hang.clear()
        settings = load_settings()
        assert usage.daily_tokens(settings) == most  # in flight when killed: its reservation counts

        monkeypatch.setenv("ROLLING_GRAPH_PROBE", "anthropic")
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-api03-test-key-not-real")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", url)
        runner.run_probe(load_settings(), "killed")  # the session's next probe

    assert len(fake.served) == 1  # the killed call's batch was not sent again
    store = SidecarStore(settings)
    entries = read_journal(store.journal_path("killed"))
    assert any("killed during its model call" in str(e.get("fallback_reason") or "") for e in entries)
    assert store.load_state("killed")["gate"]["inflight"] == [] and store.load_state("killed")["gate"]["pending"] == []
    day = usage.read_day(settings)
    assert int(day["tokens_in"]) + int(day["tokens_out"]) == most and day.get("killed") == 1 and not day.get("reservations")
    assert usage.session_tokens(store.load("killed")) == most  # the session cap sees it too
