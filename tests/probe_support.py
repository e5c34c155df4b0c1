"""Shared helpers for the model-probe tests: recorded responses served to the real clients."""

from __future__ import annotations

import importlib
import json
import threading
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from rolling_graph.core.config import ProbeSettings, Settings
from rolling_graph.probe.base import ProbeResult

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures" / "probe_responses"

Reply = dict[str, Any] | Callable[[Any], Any]


def envelope(name: str) -> dict[str, Any]:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def sdk_httpx() -> types.ModuleType:
    """The httpx flavour the installed anthropic SDK is built on (``httpx`` or ``httpx2``)."""
    import anthropic

    base = next(c for c in anthropic.DefaultHttpxClient.__mro__[1:] if c.__name__ == "Client")
    return importlib.import_module(base.__module__.split(".")[0])


class Server:
    """Answers requests from a queue of fixture envelopes (or callables) and records them."""

    def __init__(self, http: types.ModuleType, replies: list[Reply]) -> None:
        self.http = http
        self.replies = list(replies)
        self.requests: list[Any] = []
        self.bodies: list[bytes] = []

    def __call__(self, request: Any) -> Any:
        self.requests.append(request)
        self.bodies.append(request.read())
        reply = self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]
        if callable(reply):
            return reply(request)
        return self.http.Response(reply["status"], headers=reply["headers"], json=reply["body"])

    def transport(self) -> Any:
        return self.http.MockTransport(self)


def probe_settings(home: Path) -> Settings:
    return Settings(home=home, probe=ProbeSettings(timeout_s=2.0, session_token_cap=10_000, daily_token_cap=50_000))


def result(
    tokens_in: int, tokens_out: int, backend: str = "anthropic", model: str = "claude-haiku-4-5-20251001"
) -> ProbeResult:
    return ProbeResult(
        backend=backend, rationale="", patch=[], model=model, input_tokens=tokens_in, output_tokens=tokens_out
    )


@contextmanager
def serving(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """A local HTTP stand-in with ``handler`` on a free port (its base URL); stopped after."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
