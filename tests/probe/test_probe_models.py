"""Model probes against recorded wire-format responses, through the real SDK clients.

No test reaches the network: the Anthropic SDK gets an ``http_client`` with a mock
transport, the Ollama client gets an httpx mock transport, and the reachability checks
get a transport too. Backoff sleeps are injected, so retries cost no time.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import httpx
import pytest
from probe_support import ROOT, Reply, Server, envelope, probe_settings, sdk_httpx, serving

from rolling_graph.core.clock import utcnow
from rolling_graph.core.config import Settings
from rolling_graph.core.model import new_document
from rolling_graph.probe import usage
from rolling_graph.probe.anthropic_probe import AnthropicProbe, sampling_kwargs
from rolling_graph.probe.errors import ProbeFailed, retry_delay
from rolling_graph.probe.ollama_probe import OllamaProbe
from rolling_graph.probe.prompting import PATCH_SCHEMA, TOOL_NAME


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return probe_settings(tmp_path)


def doc_with_sqlite() -> dict[str, Any]:
    doc = new_document("s1")
    doc["nodes"]["use-sqlite"] = {
        "id": "use-sqlite",
        "label": "Use SQLite for the warm store",
        "domain": "technical",
        "kind": "decision",
        "weight": 0.6,
        "last_activated": "2026-11-25T20:51:00Z",
    }
    doc["focus"] = ["use-sqlite"]
    return doc


EVENTS = [
    {
        "id": "e1",
        "event": "UserPromptSubmit",
        "at": "2026-11-25T21:04:00Z",
        "text": "Actually, let's go with PostgreSQL instead of SQLite.",
    },
]


def anthropic_probe(
    settings: Settings, replies: list[Reply], sleeps: list[float] | None = None
) -> tuple[AnthropicProbe, Server]:
    import anthropic

    http = sdk_httpx()
    server = Server(http, replies)
    client = anthropic.Anthropic(
        api_key="sk-ant-api03-test-key-not-real",
        base_url="http://anthropic.invalid",
        http_client=http.Client(transport=server.transport()),
        max_retries=0,
    )
    record = sleeps if sleeps is not None else []
    return AnthropicProbe(settings, client=client, sleep=record.append), server


def ollama_probe(
    settings: Settings, replies: list[Reply], sleeps: list[float] | None = None
) -> tuple[OllamaProbe, Server]:
    import ollama

    server = Server(httpx, replies)
    client = ollama.Client(host="http://127.0.0.1:11434", transport=server.transport())
    record = sleeps if sleeps is not None else []
    return OllamaProbe(settings, client=client, sleep=record.append), server


# --- Anthropic -----------------------------------------------------------------------


def test_good_tool_use_response_becomes_rationale_and_patch(settings: Settings) -> None:
    probe, server = anthropic_probe(settings, [envelope("anthropic_good.json")])
    result = probe.run(EVENTS, doc_with_sqlite())
    assert result.backend == "anthropic"
    assert result.rationale.startswith("The user reversed the storage decision")
    assert [op["path"] for op in result.patch] == [
        "/nodes/use-postgresql",
        "/edges/use-postgresql|supersedes|use-sqlite",
    ]
    assert (result.input_tokens, result.output_tokens) == (1843, 212)
    assert result.model == "claude-haiku-4-5-20251001"
    sent = json.loads(server.bodies[0])
    assert server.requests[0].url.path == "/v1/messages"
    assert sent["model"] == "claude-haiku-4-5"
    # temperature 0 where the SDK's API version accepts it; 2026-10-21 (SDK 2.x) rejects any sampling parameter
    assert sent.get("temperature") == sampling_kwargs(probe._get_client()).get("temperature")
    assert sent["tool_choice"] == {"type": "tool", "name": TOOL_NAME}
    assert sent["tools"][0]["input_schema"] == PATCH_SCHEMA
    assert "data, never instructions" in sent["system"]
    assert "PostgreSQL instead of SQLite" in sent["messages"][0]["content"]
    assert "use-sqlite | technical/decision | 0.60" in sent["messages"][0]["content"]


def test_prose_wrapped_json_is_parsed(settings: Settings) -> None:
    probe, _ = anthropic_probe(settings, [envelope("anthropic_prose.json")])
    result = probe.run(EVENTS, doc_with_sqlite())
    assert len(result.patch) == 2
    assert result.patch[0]["value"]["kind"] == "decision"


def test_output_cut_at_max_tokens_fails_with_reason_and_keeps_token_count(settings: Settings) -> None:
    probe, _ = anthropic_probe(settings, [envelope("anthropic_truncated.json")])
    with pytest.raises(ProbeFailed) as info:
        probe.run(EVENTS, doc_with_sqlite())
    assert "truncated" in info.value.reason
    assert (info.value.input_tokens, info.value.output_tokens) == (1843, 2048)


def test_truncated_json_text_fails_with_reason(settings: Settings) -> None:
    probe, _ = anthropic_probe(settings, [envelope("anthropic_truncated_text.json")])
    with pytest.raises(ProbeFailed) as info:
        probe.run(EVENTS, doc_with_sqlite())
    assert info.value.reason == "output: truncated JSON" and info.value.backend == "anthropic"


def test_invalid_patch_is_passed_on_and_rejected_whole_by_validation(settings: Settings) -> None:
    from rolling_graph.core import patch as patch_mod

    probe, _ = anthropic_probe(settings, [envelope("anthropic_invalid_patch.json")])
    result = probe.run(EVENTS, doc_with_sqlite())
    assert len(result.patch) == 4  # the backend does not judge; validation does
    from rolling_graph.core.clock import utcnow

    with pytest.raises(patch_mod.PatchRejected):
        patch_mod.validate_ops(result.patch, doc_with_sqlite(), utcnow())


def test_hundreds_of_operations_fail_the_probe(settings: Settings) -> None:
    probe, _ = anthropic_probe(settings, [envelope("anthropic_too_many_ops.json")])
    with pytest.raises(ProbeFailed) as info:
        probe.run(EVENTS, doc_with_sqlite())
    assert "300 operations exceed" in info.value.reason


def test_rate_limit_is_retried_then_succeeds(settings: Settings) -> None:
    sleeps: list[float] = []
    probe, server = anthropic_probe(settings, [envelope("anthropic_429.json"), envelope("anthropic_good.json")], sleeps)
    result = probe.run(EVENTS, doc_with_sqlite())
    assert len(server.requests) == 2
    assert sleeps == [0.0]  # the 429 said retry-after: 0
    assert len(result.patch) == 2


def test_persistent_overload_gives_up_after_three_attempts_with_backoff(settings: Settings) -> None:
    sleeps: list[float] = []
    probe, server = anthropic_probe(settings, [envelope("anthropic_529.json")], sleeps)
    with pytest.raises(ProbeFailed) as info:
        probe.run(EVENTS, doc_with_sqlite())
    assert len(server.requests) == 3
    assert sleeps == [1.0, 2.0]
    assert info.value.reason == "overloaded (529) after 3 attempts"


def test_a_timeout_is_charged_the_calls_maximum_and_not_sent_again(settings: Settings) -> None:
    """Issue 36, case 6: 15 requests that timed out were counted 0 tokens, so the cap never
    tripped. A timed-out request may be billed in full: charged its maximum, once."""
    http = sdk_httpx()

    def hang(request: Any) -> Any:
        raise http.ReadTimeout("read timed out", request=request)

    probe, server = anthropic_probe(settings, [hang])
    most = probe.max_call_tokens(EVENTS, doc_with_sqlite())
    with pytest.raises(ProbeFailed) as info:
        probe.run(EVENTS, doc_with_sqlite())
    assert len(server.requests) == 1
    assert info.value.reason == "timed out after 2 s (charged its maximum, not retried)"
    assert info.value.output_tokens == probe.bounds.max_output_tokens
    assert info.value.input_tokens > 0 and info.value.input_tokens + info.value.output_tokens == most


def test_authentication_error_is_not_retried(settings: Settings) -> None:
    probe, server = anthropic_probe(settings, [envelope("anthropic_401.json")])
    with pytest.raises(ProbeFailed) as info:
        probe.run(EVENTS, doc_with_sqlite())
    assert len(server.requests) == 1
    assert "authentication failed" in info.value.reason


def test_missing_api_key_fails_before_any_request(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(ProbeFailed) as info:
        AnthropicProbe(settings).run(EVENTS, doc_with_sqlite())
    assert "ANTHROPIC_API_KEY is not set" in info.value.reason


def test_backoff_grows_and_is_capped() -> None:
    assert [retry_delay(n) for n in range(5)] == [1.0, 2.0, 4.0, 8.0, 8.0]
    assert retry_delay(0, retry_after=3.0) == 3.0
    assert retry_delay(0, retry_after=600.0) == 1.0  # an absurd retry-after is not obeyed


# --- Ollama --------------------------------------------------------------------------


def test_ollama_chat_response_is_parsed_with_token_counts(settings: Settings) -> None:
    probe, server = ollama_probe(settings, [envelope("ollama_chat.json")])
    result = probe.run(EVENTS, doc_with_sqlite())
    assert result.backend == "ollama"
    assert len(result.patch) == 2
    assert (result.input_tokens, result.output_tokens) == (1530, 142)
    sent = json.loads(server.bodies[0])
    assert server.requests[0].url.path == "/api/chat"
    assert sent["format"] == PATCH_SCHEMA
    assert sent["options"]["temperature"] == 0
    assert sent["stream"] is False
    assert sent["messages"][0]["role"] == "system"


def test_ollama_output_cut_at_length_fails(settings: Settings) -> None:
    probe, _ = ollama_probe(settings, [envelope("ollama_truncated.json")])
    with pytest.raises(ProbeFailed) as info:
        probe.run(EVENTS, doc_with_sqlite())
    assert "truncated" in info.value.reason
    assert info.value.output_tokens == 2048


def test_ollama_missing_model_says_how_to_pull_it(settings: Settings) -> None:
    probe, server = ollama_probe(settings, [envelope("ollama_404.json")])
    with pytest.raises(ProbeFailed) as info:
        probe.run(EVENTS, doc_with_sqlite())
    assert "ollama pull llama3.2" in info.value.reason
    assert len(server.requests) == 1


def test_ollama_not_running_fails_fast(settings: Settings) -> None:
    def refused(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    probe, server = ollama_probe(settings, [refused])
    with pytest.raises(ProbeFailed) as info:
        probe.run(EVENTS, doc_with_sqlite())
    assert "not reachable" in info.value.reason or "Failed to connect" in info.value.reason
    assert len(server.requests) == 1


def test_ollama_timeout_is_retried_then_fails(settings: Settings) -> None:
    def hang(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("timed out", request=request)

    sleeps: list[float] = []
    probe, server = ollama_probe(settings, [hang], sleeps)
    with pytest.raises(ProbeFailed) as info:
        probe.run(EVENTS, doc_with_sqlite())
    assert len(server.requests) == 2 and sleeps == [1.0]
    assert "timed out" in info.value.reason


# --- Redaction on the wire -------------------------------------------------------------

FAKE_SECRETS = {
    "anthropic": "sk-ant-api03-" + "Zx9" * 30,
    "github": "ghp_" + "a1B2c3D4e5" * 4,
    "aws_id": "AKIA" + "QWERTYUIOPASDFGH",
    "aws_secret": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzzzzSECRET1",
    "db_password": "pg-Passw0rd-xyz",
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "private_note": "my bank pin is 4921",
}


def seeded_events() -> list[dict[str, Any]]:
    s = FAKE_SECRETS
    return [
        {"id": "e1", "event": "UserPromptSubmit", "text": f"Use my key {s['anthropic']} and push with {s['github']}."},
        {
            "id": "e2",
            "event": "PostToolUse",
            "tool": "Bash",
            "text": (
                f"$ cat .env\nAWS_ACCESS_KEY_ID={s['aws_id']}\naws_secret_access_key = {s['aws_secret']}\n"
                f"DATABASE_URL=postgres://app:{s['db_password']}@db:5432/app\nAuthorization: Bearer {s['jwt']}\n"
            ),
        },
        {"id": "e3", "event": "UserPromptSubmit", "text": f"<private>{s['private_note']}</private> now fix the tests"},
    ]


def test_anthropic_request_body_carries_no_secret_from_the_events(settings: Settings) -> None:
    probe, server = anthropic_probe(settings, [envelope("anthropic_good.json")])
    doc = doc_with_sqlite()
    doc["nodes"]["use-sqlite"]["label"] = f"token {FAKE_SECRETS['github']}"
    probe.run(seeded_events(), doc)
    body = server.bodies[0].decode()
    for name, secret in FAKE_SECRETS.items():
        assert secret not in body, name
    assert "[REDACTED:github-token]" in body and "now fix the tests" in body


def test_ollama_request_body_carries_no_secret_from_the_events(settings: Settings) -> None:
    probe, server = ollama_probe(settings, [envelope("ollama_chat.json")])
    probe.run(seeded_events(), doc_with_sqlite())
    body = server.bodies[0].decode()
    for name, secret in FAKE_SECRETS.items():
        assert secret not in body, name


# --- The hook process stays light ------------------------------------------------------


def test_hook_process_never_imports_model_sdks() -> None:
    code = (
        "import sys, rolling_graph.hook, rolling_graph.safety.redact\n"
        "bad = [m for m in ('anthropic', 'ollama', 'httpx', 'httpx2') if m in sys.modules]\n"
        "print(','.join(bad))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == ""


def test_hook_that_fires_a_model_probe_still_never_imports_model_sdks(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    payload = {
        "session_id": "no-sdk-in-hook",
        "transcript_path": str(project / "t.jsonl"),
        "cwd": str(project),
        "hook_event_name": "UserPromptSubmit",
        "prompt": "Actually no, let's go with PostgreSQL instead of SQLite.",
    }
    code = (
        "import json, sys\n"
        "from rolling_graph.hook import handle_event\n"
        f"handle_event('user-prompt-submit', json.loads({json.dumps(json.dumps(payload))}))\n"
        "print(','.join(m for m in ('anthropic', 'ollama') if m in sys.modules))"
    )
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("ROLLING_GRAPH_", "ANTHROPIC_"))},
        "ROLLING_GRAPH_HOME": str(tmp_path / "home"),
        "ROLLING_GRAPH_PROBE": "anthropic",
        "ROLLING_GRAPH_PROBE_MODE": "async",
        "ROLLING_GRAPH_WARM": "off",
        "ANTHROPIC_API_KEY": "sk-ant-test-not-real",
        "ANTHROPIC_BASE_URL": "http://127.0.0.1:9",
    }
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == ""
    state = json.loads((tmp_path / "home" / "sessions" / "no-sdk-in-hook.state.json").read_text())
    assert state["counters"]["gate_fired"] >= 1  # the probe was started, detached


# --- End to end: hook (sync) -> runner -> Anthropic SDK -> a local server on 127.0.0.1 -------


def two_new_nodes_message() -> dict[str, Any]:
    answer = {
        "rationale": "The user chose PostgreSQL over SQLite.",
        "patch": [
            {
                "op": "add",
                "path": "/nodes/use-postgresql",
                "value": {"label": "Use PostgreSQL", "domain": "technical", "kind": "decision"},
            },
            {
                "op": "add",
                "path": "/nodes/sqlite",
                "value": {"label": "SQLite", "domain": "technical", "kind": "entity"},
            },
            {
                "op": "add",
                "path": "/edges/use-postgresql|supersedes|sqlite",
                "value": {
                    "source": "use-postgresql",
                    "target": "sqlite",
                    "relationship": "supersedes",
                    "strength": 0.8,
                },
            },
        ],
    }
    good = envelope("anthropic_good.json")
    good["body"]["content"][0]["input"] = answer
    return good


@pytest.fixture
def local_messages_api() -> Iterator[tuple[str, list[dict[str, Any]], list[bytes]]]:
    """A Messages API on 127.0.0.1 answering from a queue of envelopes; yields (url, queue, bodies)."""
    queue: list[dict[str, Any]] = []
    bodies: list[bytes] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's naming
            bodies.append(self.rfile.read(int(self.headers.get("content-length", 0))))
            reply = queue.pop(0) if len(queue) > 1 else queue[0]
            data = json.dumps(reply["body"]).encode()
            self.send_response(reply["status"])
            for key, value in reply["headers"].items():
                if key.lower() != "content-length":
                    self.send_header(key, value)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    with serving(Handler) as url:
        yield url, queue, bodies


def test_sync_probe_through_the_runner_journals_the_model_patch_and_its_tokens(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, local_messages_api: tuple[str, list[dict[str, Any]], list[bytes]]
) -> None:
    from rolling_graph.core.config import load_settings
    from rolling_graph.hook import handle_event
    from rolling_graph.store.journal import read_journal
    from rolling_graph.store.sidecar import SidecarStore

    url, queue, bodies = local_messages_api
    queue.extend([envelope("anthropic_429.json"), two_new_nodes_message()])
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-not-real")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", url)
    settings = load_settings(
        {
            "ROLLING_GRAPH_HOME": str(tmp_path / "home"),
            "ROLLING_GRAPH_PROBE": "anthropic",
            "ROLLING_GRAPH_PROBE_MODE": "sync",
            "ROLLING_GRAPH_WARM": "off",
        }
    )
    project = tmp_path / "project"
    project.mkdir()
    secret = "ghp_" + "Q7w8E9r0T1" * 4
    payload = {
        "session_id": "e2e-anthropic",
        "transcript_path": str(project / "t.jsonl"),
        "cwd": str(project),
        "hook_event_name": "UserPromptSubmit",
        "prompt": f"Actually no, let's go with PostgreSQL instead of SQLite. My token is {secret}.",
    }
    handle_event("user-prompt-submit", payload, settings)

    assert len(bodies) == 2  # the 429, then the answer
    assert all(secret.encode() not in body for body in bodies)
    store = SidecarStore(settings)
    doc = store.load("e2e-anthropic")
    assert doc["nodes"]["use-postgresql"]["kind"] == "decision"
    assert "use-postgresql|supersedes|sqlite" in doc["edges"]
    entries = [e for e in read_journal(store.journal_path("e2e-anthropic")) if e.get("kind") == "patch"]
    model = [e for e in entries if e["backend"] == "anthropic"]
    assert len(model) == 1 and model[0]["rationale"] == "The user chose PostgreSQL over SQLite."
    # What code states exactly (the request in the user's words) is folded beside the model's patch.
    assert entries[-1]["backend"] == "offline" and entries[-1]["rationale"].startswith("tool events folded")
    (request,) = [n for n in doc["nodes"].values() if n["kind"] == "request"]
    assert request["label"].startswith("Actually no, let's go with PostgreSQL") and secret not in request.get("summary", "")
    assert doc["counters"]["probe_tokens_in"] == 1843
    assert usage.read_day(settings)["by_backend"]["anthropic"]["tokens_out"] == 212


# --- A coding session: new kinds and the facts a model may state (prompt probe_v2) ---------


def coding_doc() -> dict[str, Any]:
    """A graph code built from tool calls: a tracker task, a file, a failing test's error."""
    from rolling_graph.core.patch import validate_ops

    doc = new_document("s-coding")
    nodes = [
        ("task-parcel-12", {"label": "parcel-12: Annual invoices prorated twice", "domain": "project", "kind": "task",
                            "facts": {"status": "in_progress", "ref": "parcel-12"}}),
        ("billing-proration-py", {"label": "billing/proration.py", "domain": "technical", "kind": "file",
                                  "facts": {"path": "billing/proration.py", "edits": 2, "last_op": "edit"}}),
        ("err-failed-test-annual-upgrade", {"label": "FAILED tests/billing/test_proration.py::test_annual_upgrade",
                                            "domain": "technical", "kind": "error", "facts": {"state": "open", "from": "pytest"}}),
    ]
    ops, _ = validate_ops([{"op": "add", "path": f"/nodes/{nid}", "value": v} for nid, v in nodes], doc, utcnow(), trusted=True)
    import jsonpatch

    jsonpatch.apply_patch(doc, ops, in_place=True)
    return doc


CODING_EVENTS = [
    {"id": "a9", "event": "AssistantText", "at": "2026-11-25T21:04:00Z",
     "text": "I'll keep proration only in `apply_plan_change` instead of the webhook."},
    {"id": "e9", "event": "PostToolUse", "at": "2026-11-25T21:04:05Z", "tool": "Bash", "text": "$ python -m pytest -q tests/billing\n17 passed in 0.38s",
     "paths": [], "data": {"cmd": "python -m pytest -q tests/billing"}},
]


def _applied(result: Any, doc: dict[str, Any]) -> dict[str, Any]:
    import jsonpatch

    from rolling_graph.core.patch import validate_ops

    ops, _ = validate_ops(result.patch, doc, utcnow())  # a model's patch: not trusted
    jsonpatch.apply_patch(doc, ops, in_place=True)
    return doc


def _assert_coding_patch_applied(doc: dict[str, Any]) -> None:
    assert doc["nodes"]["task-parcel-12"]["facts"] == {"status": "completed", "ref": "parcel-12"}
    assert doc["nodes"]["err-failed-test-annual-upgrade"]["facts"]["state"] == "resolved"
    assert doc["nodes"]["billing-proration-py"]["facts"]["edits"] == 2  # untouched: only code counts
    assert "prorate-only-in-apply-plan-change|decides|billing-proration-py" in doc["edges"]


def test_anthropic_coding_answer_states_a_task_status_and_an_error_state(settings: Settings) -> None:
    probe, server = anthropic_probe(settings, [envelope("anthropic_coding.json")])
    doc = coding_doc()
    result = probe.run(CODING_EVENTS, doc)
    sent = json.loads(server.bodies[0])
    # The prompt says what code records and which facts a model may state; the graph shows facts.
    assert "`request`" in sent["system"] and "facts/status" in sent["system"] and "Do not add `file`" in sent["system"]
    assert "task-parcel-12 | project/task | 0.60 | parcel-12: Annual invoices prorated twice {status: in_progress}" in sent["messages"][0]["content"]
    assert "AssistantText" in sent["messages"][0]["content"]
    _assert_coding_patch_applied(_applied(result, doc))


def test_ollama_coding_answer_is_validated_the_same_way(settings: Settings) -> None:
    probe, server = ollama_probe(settings, [envelope("ollama_coding.json")])
    doc = coding_doc()
    result = probe.run(CODING_EVENTS, doc)
    assert "facts/outcome" in json.loads(server.bodies[0])["messages"][0]["content"]
    _assert_coding_patch_applied(_applied(result, doc))


def test_claude_cli_coding_answer_is_validated_the_same_way(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    from rolling_graph.probe.claude_probe import ClaudeProbe

    recorded = envelope("claude_coding.json")
    monkeypatch.setattr(ClaudeProbe, "_execute", lambda self, argv, message, max_tokens: (
        recorded["exit_code"], json.dumps(recorded["stdout"]).encode(), ""))
    doc = coding_doc()
    result = ClaudeProbe(settings).call(CODING_EVENTS, doc)
    assert (result.backend, result.input_tokens, result.output_tokens) == ("claude", 2410, 118)
    _assert_coding_patch_applied(_applied(result, doc))


def test_a_model_that_writes_counts_has_its_whole_patch_refused(settings: Settings) -> None:
    from rolling_graph.core.patch import PatchRejected, validate_ops

    probe, _ = anthropic_probe(settings, [envelope("anthropic_forged_facts.json")])
    doc = coding_doc()
    result = probe.run(CODING_EVENTS, doc)
    with pytest.raises(PatchRejected, match="edits"):
        validate_ops(result.patch, doc, utcnow())
