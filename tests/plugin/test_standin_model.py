"""The stand-in Messages API speaks the protocol Claude Code and the Anthropic SDK expect."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import anthropic
import httpx
import pytest
from standin_model import EMPTY_SUMMARY, SIDE_ANSWER, StandinModel, ToolCall, Turn

TOOLS = [
    {
        "name": "Bash",
        "description": "run",
        "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}},
    }
]


def conversation(text: str, *, tools: bool = True, stream: bool = True) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": "claude-test",
        "max_tokens": 100,
        "stream": stream,
        "messages": [{"role": "user", "content": [{"type": "text", "text": text}]}],
    }
    if tools:
        body["tools"] = TOOLS
    return body


def sse(response: httpx.Response) -> list[tuple[str, dict[str, Any]]]:
    events: list[tuple[str, dict[str, Any]]] = []
    name = ""
    for line in response.text.splitlines():
        if line.startswith("event: "):
            name = line.removeprefix("event: ")
        elif line.startswith("data: "):
            events.append((name, json.loads(line.removeprefix("data: "))))
    return events


@pytest.fixture
def model() -> Iterator[StandinModel]:
    with StandinModel([Turn.tools(ToolCall("Bash", {"command": "ls -la"})), Turn.say("All done.")]) as server:
        yield server


def test_streamed_tool_call_arrives_as_the_sse_event_sequence(model: StandinModel) -> None:
    response = httpx.post(f"{model.base_url}/v1/messages?beta=true", json=conversation("list files"))

    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    events = sse(response)
    assert [name for name, _ in events] == [
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    assert events[1][1]["content_block"]["name"] == "Bash"
    assert json.loads(events[2][1]["delta"]["partial_json"]) == {"command": "ls -la"}
    assert events[4][1]["delta"]["stop_reason"] == "tool_use"


def test_script_is_consumed_in_order_then_ends_the_turn(model: StandinModel) -> None:
    first = httpx.post(f"{model.base_url}/v1/messages", json=conversation("go", stream=False)).json()
    second = httpx.post(f"{model.base_url}/v1/messages", json=conversation("go", stream=False)).json()
    third = httpx.post(f"{model.base_url}/v1/messages", json=conversation("go", stream=False)).json()

    assert first["content"][0]["type"] == "tool_use" and first["stop_reason"] == "tool_use"
    assert second["content"] == [{"type": "text", "text": "All done."}] and second["stop_reason"] == "end_turn"
    assert third["content"] == [{"type": "text", "text": "Done."}]


def test_compaction_gets_an_empty_summary_without_spending_the_script(model: StandinModel) -> None:
    body = conversation("CRITICAL: Respond with TEXT ONLY. Do NOT call any tools.", stream=False)

    answer = httpx.post(f"{model.base_url}/v1/messages", json=body).json()

    assert answer["content"][0]["text"] == EMPTY_SUMMARY
    assert "<summary>" in EMPTY_SUMMARY
    assert model.remaining_turns == 2
    assert [r.kind for r in model.requests] == ["compact"]


def test_side_requests_without_tools_get_a_harmless_answer(model: StandinModel) -> None:
    answer = httpx.post(
        f"{model.base_url}/v1/messages", json=conversation("write a title", tools=False, stream=False)
    ).json()

    assert answer["content"] == [{"type": "text", "text": SIDE_ANSWER}]
    assert model.remaining_turns == 2


def test_count_tokens_and_unknown_paths_answer_in_the_api_shape(model: StandinModel) -> None:
    counted = httpx.post(f"{model.base_url}/v1/messages/count_tokens", json=conversation("hi"))
    missing = httpx.get(f"{model.base_url}/v1/models")

    assert counted.json()["input_tokens"] > 0
    assert missing.status_code == 404 and missing.json()["type"] == "error"


def test_every_request_body_is_recorded_with_its_query(model: StandinModel) -> None:
    httpx.post(f"{model.base_url}/v1/messages?beta=true", json=conversation("remember PostgreSQL"))

    (recorded,) = model.requests
    assert recorded.query == "beta=true"
    assert recorded.kind == "main"
    assert "remember PostgreSQL" in recorded.text()


def test_the_anthropic_sdk_parses_the_stream(model: StandinModel) -> None:
    client = anthropic.Anthropic(api_key="fake", base_url=model.base_url, max_retries=0)

    with client.messages.stream(
        model="claude-test",
        max_tokens=100,
        tools=TOOLS,  # type: ignore[arg-type]
        messages=[{"role": "user", "content": "go"}],
    ) as stream:
        message = stream.get_final_message()

    assert message.stop_reason == "tool_use"
    assert message.content[0].type == "tool_use"
    assert message.content[0].input == {"command": "ls -la"}
