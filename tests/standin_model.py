"""A stand-in for the Anthropic Messages API, for end-to-end tests with the real Claude Code CLI.

Claude Code talks to whatever ``ANTHROPIC_BASE_URL`` names. This module serves just enough of
the Messages API on 127.0.0.1 for whole sessions to run offline and in milliseconds:

* ``POST /v1/messages`` streaming (Server-Sent Events) or not, any query string (``?beta=true``);
* ``POST /v1/messages/count_tokens``;
* anything else: a 404 in the API's error shape.

The *main loop* requests (the ones that carry the conversation and the tool list) are answered
from a script: a queue of turns, each either tool calls or text. The compaction request (its
prompt says "Respond with TEXT ONLY") gets a summary that says nothing, so whatever survives a
compaction survives because a hook put it back. Side requests (titles, topics, quota probes) get
a short harmless text. Every request body is recorded for the tests to assert on.

*Probe* requests — a ``claude -p --json-schema`` run whose only tool is ``StructuredOutput``, as
the ``claude`` probe backend makes them — are answered from a second queue of
:class:`ProbeReply` (an answer, a malformed text, an HTTP error, a hang), so tests can make the
model misbehave for the probe without disturbing a scripted main loop.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal
from urllib.parse import urlsplit

COMPACTION_MARKER = "Respond with TEXT ONLY"
EMPTY_SUMMARY = "<analysis>\nNothing to analyse.\n</analysis>\n\n<summary>\nNothing of note.\n</summary>"
SIDE_ANSWER = "ok"
DEFAULT_FINAL_TEXT = "Done."

STRUCTURED_OUTPUT_TOOL = "StructuredOutput"
#: What a probe request gets when no :class:`ProbeReply` is queued: a valid, empty patch.
EMPTY_PATCH_ANSWER: dict[str, Any] = {"rationale": "Nothing to record.", "patch": []}

RequestKind = Literal["main", "compact", "side", "probe", "count_tokens", "other"]


@dataclass(frozen=True)
class ToolCall:
    """One tool_use block the scripted model emits."""

    name: str
    input: dict[str, Any]


@dataclass(frozen=True)
class Turn:
    """One scripted model response: tool calls (stop_reason tool_use) or text (end_turn)."""

    tool_calls: tuple[ToolCall, ...] = ()
    text: str = ""

    @staticmethod
    def tools(*calls: ToolCall) -> Turn:
        return Turn(tool_calls=tuple(calls))

    @staticmethod
    def say(text: str) -> Turn:
        return Turn(text=text)


@dataclass(frozen=True)
class ProbeReply:
    """How the stand-in answers one probe (structured-output) request.

    ``answer`` is the ``StructuredOutput`` tool input; ``text`` instead answers with prose and no
    tool call (a malformed structured output); ``status`` other than 200 answers with an API
    error of that status (``retry_after`` seconds in the header); ``delay_s`` holds the answer
    back (a hang, when longer than the caller's timeout).
    """

    answer: dict[str, Any] | None = None
    text: str = ""
    status: int = 200
    retry_after: float | None = None
    delay_s: float = 0.0

    @staticmethod
    def patch(rationale: str, ops: list[dict[str, Any]]) -> ProbeReply:
        return ProbeReply(answer={"rationale": rationale, "patch": ops})

    @staticmethod
    def error(status: int, retry_after: float | None = 0.0) -> ProbeReply:
        return ProbeReply(status=status, retry_after=retry_after)

    @staticmethod
    def prose(text: str = "I would rather explain the graph in words.") -> ProbeReply:
        return ProbeReply(text=text)

    @staticmethod
    def hang(seconds: float) -> ProbeReply:
        return ProbeReply(answer=EMPTY_PATCH_ANSWER, delay_s=seconds)


_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    429: "rate_limit_error",
    529: "overloaded_error",
}


@dataclass
class RecordedRequest:
    """One request as Claude Code sent it."""

    method: str
    path: str
    query: str
    headers: dict[str, str]
    body: dict[str, Any]
    kind: RequestKind = "other"

    def text(self) -> str:
        """Everything a model would read in this request (system + messages), flattened."""
        return "\n".join(iter_texts(self.body))


@dataclass
class _State:
    turns: deque[Turn]
    summary: str
    final_text: str
    requests: list[RecordedRequest] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    ids: Iterator[int] = field(default_factory=lambda: itertools.count(1))
    probe_replies: deque[ProbeReply] = field(default_factory=deque)
    probe_default: ProbeReply = field(default_factory=lambda: ProbeReply(answer=EMPTY_PATCH_ANSWER))
    closing: threading.Event = field(default_factory=threading.Event)


def iter_texts(value: Any) -> Iterator[str]:
    """Yield every string under the keys a model reads: ``text``, ``content``, ``system``."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from iter_texts(item)
    elif isinstance(value, dict):
        for key in ("system", "text", "content", "messages"):
            if key in value:
                yield from iter_texts(value[key])


def classify(path: str, body: dict[str, Any]) -> RequestKind:
    """Tell the main loop from compaction and side requests, by what the body carries."""
    if path.endswith("/count_tokens"):
        return "count_tokens"
    if not path.endswith("/v1/messages"):
        return "other"
    messages = body.get("messages") or []
    last_user = next((m for m in reversed(messages) if m.get("role") == "user"), None)
    if last_user is not None and any(COMPACTION_MARKER in t for t in iter_texts(last_user.get("content"))):
        return "compact"
    tools = body.get("tools") or []
    if tools and all(isinstance(t, dict) and t.get("name") == STRUCTURED_OUTPUT_TOOL for t in tools):
        return "probe"
    return "main" if tools else "side"


def message_blocks(turn: Turn, id_source: Iterator[int]) -> list[dict[str, Any]]:
    """The content blocks of a scripted turn, as the API returns them."""
    blocks: list[dict[str, Any]] = []
    if turn.text:
        blocks.append({"type": "text", "text": turn.text})
    for call in turn.tool_calls:
        blocks.append(
            {"type": "tool_use", "id": f"toolu_standin_{next(id_source):04d}", "name": call.name, "input": call.input}
        )
    return blocks


def sse_events(message: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """The streaming event sequence for a complete message."""
    head = dict(message, content=[], stop_reason=None, stop_sequence=None)
    head["usage"] = dict(message["usage"], output_tokens=1)
    yield "message_start", {"type": "message_start", "message": head}
    for index, block in enumerate(message["content"]):
        if block["type"] == "text":
            yield (
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}},
            )
            delta = {"type": "text_delta", "text": block["text"]}
        else:
            start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            yield "content_block_start", {"type": "content_block_start", "index": index, "content_block": start}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        yield "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    yield (
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
            "usage": {"output_tokens": message["usage"]["output_tokens"]},
        },
    )
    yield "message_stop", {"type": "message_stop"}


def _estimate_tokens(body: dict[str, Any]) -> int:
    return max(1, len(json.dumps(body)) // 4)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's name
        pass

    def do_HEAD(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self) -> None:
        self._record({})
        self._send_json(404, {"type": "error", "error": {"type": "not_found_error", "message": "stand-in model"}})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            body = {"_raw": raw.decode("utf-8", "replace")}
        recorded = self._record(body if isinstance(body, dict) else {"_raw": body})
        if recorded.kind == "count_tokens":
            self._send_json(200, {"input_tokens": _estimate_tokens(recorded.body)})
        elif recorded.kind == "other":
            self._send_json(404, {"type": "error", "error": {"type": "not_found_error", "message": "stand-in model"}})
        elif recorded.kind == "probe":
            self._answer_probe(recorded)
        else:
            message = self._answer(recorded)
            if recorded.body.get("stream"):
                self._send_stream(message)
            else:
                self._send_json(200, message)

    def _record(self, body: dict[str, Any]) -> RecordedRequest:
        parts = urlsplit(self.path)
        recorded = RecordedRequest(
            method=self.command,
            path=parts.path,
            query=parts.query,
            headers={k.lower(): v for k, v in self.headers.items()},
            body=body,
            kind=classify(parts.path, body) if self.command == "POST" else "other",
        )
        with self.server.state.lock:
            self.server.state.requests.append(recorded)
        return recorded

    def _answer_probe(self, recorded: RecordedRequest) -> None:
        state = self.server.state
        with state.lock:
            reply = state.probe_replies.popleft() if state.probe_replies else state.probe_default
        if reply.delay_s > 0 and state.closing.wait(reply.delay_s):
            return  # the stand-in is stopping: drop the connection unanswered
        try:
            if reply.status != 200:
                error = {"type": _ERROR_TYPES.get(reply.status, "api_error"), "message": "stand-in model says no"}
                headers = {} if reply.retry_after is None else {"retry-after": f"{reply.retry_after:g}"}
                self._send_json(reply.status, {"type": "error", "error": error}, headers)
                return
            turn = Turn.say(reply.text) if reply.answer is None else Turn.tools(ToolCall(STRUCTURED_OUTPUT_TOOL, reply.answer))
            message = self._message(recorded, turn)
            if recorded.body.get("stream"):
                self._send_stream(message)
            else:
                self._send_json(200, message)
        except (BrokenPipeError, ConnectionResetError):
            return  # the caller gave up (its timeout): nothing to answer

    def _answer(self, recorded: RecordedRequest) -> dict[str, Any]:
        state = self.server.state
        with state.lock:
            if recorded.kind == "main":
                turn = state.turns.popleft() if state.turns else Turn.say(state.final_text)
            elif recorded.kind == "compact":
                turn = Turn.say(state.summary)
            else:
                turn = Turn.say(SIDE_ANSWER)
        return self._message(recorded, turn)

    def _message(self, recorded: RecordedRequest, turn: Turn) -> dict[str, Any]:
        state = self.server.state
        with state.lock:
            blocks = message_blocks(turn, state.ids)
            number = next(state.ids)
        return {
            "id": f"msg_standin_{number:06d}",
            "type": "message",
            "role": "assistant",
            "model": recorded.body.get("model", "standin"),
            "content": blocks,
            "stop_reason": "tool_use" if turn.tool_calls else "end_turn",
            "stop_sequence": None,
            "usage": {
                "input_tokens": _estimate_tokens(recorded.body),
                "output_tokens": max(1, len(json.dumps(blocks)) // 4),
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
            },
        }

    def _send_json(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("request-id", "req_standin")
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def _send_stream(self, message: dict[str, Any]) -> None:
        data = b"".join(f"event: {name}\ndata: {json.dumps(event)}\n\n".encode() for name, event in sse_events(message))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("request-id", "req_standin")
        self.end_headers()
        self.wfile.write(data)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    state: _State


class StandinModel:
    """A scripted Messages API on 127.0.0.1; use as a context manager.

    >>> with StandinModel([Turn.tools(ToolCall("Bash", {"command": "ls"})), Turn.say("Done.")]) as model:
    ...     env = {"ANTHROPIC_BASE_URL": model.base_url}
    """

    def __init__(
        self, turns: Iterable[Turn] = (), *, summary: str = EMPTY_SUMMARY, final_text: str = DEFAULT_FINAL_TEXT
    ) -> None:
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.state = _State(turns=deque(turns), summary=summary, final_text=final_text)
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, name="standin-model", daemon=True
        )

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        assert isinstance(host, str)  # bound: getsockname() of an AF_INET socket (typeshed also allows bytes)
        return f"http://{host}:{port}"

    def start(self) -> StandinModel:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.state.closing.set()  # wake any hanging probe answer
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> StandinModel:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def script(self, *turns: Turn) -> None:
        """Queue more main-loop turns (e.g. before the next ``claude -p`` run)."""
        with self._server.state.lock:
            self._server.state.turns.extend(turns)

    def script_probe(self, *replies: ProbeReply) -> None:
        """Queue answers for the next probe requests (after them: :meth:`set_probe_default`)."""
        with self._server.state.lock:
            self._server.state.probe_replies.extend(replies)

    def set_probe_default(self, reply: ProbeReply) -> None:
        """How probe requests are answered once the queue is empty (default: an empty patch)."""
        with self._server.state.lock:
            self._server.state.probe_default = reply

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._server.state.lock:
            return list(self._server.state.requests)

    def requests_of(self, kind: RequestKind) -> list[RecordedRequest]:
        return [r for r in self.requests if r.kind == kind]

    @property
    def remaining_turns(self) -> int:
        with self._server.state.lock:
            return len(self._server.state.turns)
