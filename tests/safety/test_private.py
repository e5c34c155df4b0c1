"""``<private>`` as a tolerant tag: every way a user may type it keeps the text out of memory,
in every field, including a span whose opening tag falls in the part a cut elides."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rolling_graph.capture.events import TEXT_MAX, bounded, event_from_payload, redact_batch
from rolling_graph.safety.redact import redact, redact_fast, redact_private

SECRET = "diary-entry-7731"
MARK = "[REDACTED:private]"

# (how it is typed, the text): each must lose SECRET and keep "before" and "after".
VARIANTS: list[tuple[str, str]] = [
    ("plain", f"before <private>{SECRET}</private> after"),
    ("upper case", f"before <PRIVATE>{SECRET}</PRIVATE> after"),
    ("mixed case", f"before <Private>{SECRET}</pRiVaTe> after"),
    ("space before >", f"before <private >{SECRET}</private > after"),
    ("space after <", f"before < private>{SECRET}</ private> after"),
    ("newline before >", f"before <private\n>{SECRET}</private\n> after"),
    ("newline inside close", f"before <private>{SECRET}<\n/private> after"),
    ("attribute", f'before <private reason="x">{SECRET}</private> after'),
    ("attribute holding >", f"before <private note='a>b' level=2>{SECRET}</private> after"),
    ("tab and attributes", f"before <private\tkind=notes\n>{SECRET}</private> after"),
    ("JSON-escaped newline", 'before {"t": "<private\\n>' + SECRET + '</private\\n>"} after'),
    ("nested", f"before <private>a <private>b</private> {SECRET} </private> after"),
    ("nested three deep", f"before <private><private><private>x</private>{SECRET}</private>y</private> after"),
    ("two spans", f"before <private>{SECRET}</private> middle <private>{SECRET}</private> after"),
]


@pytest.mark.parametrize(("how", "text"), VARIANTS, ids=[v[0] for v in VARIANTS])
def test_every_way_of_typing_the_tag_removes_the_span(how: str, text: str) -> None:
    for fn in (redact_private, redact_fast, redact):
        out = fn(text)
        assert SECRET not in out, (how, fn.__name__, out)
        assert out.startswith("before ") and out.endswith(" after"), (how, out)
        assert MARK in out


def test_an_inner_close_does_not_end_the_outer_span() -> None:
    out = redact_private(f"a <private>x <private>y</private> {SECRET}</private> b")
    assert out == f"a {MARK} b"


@pytest.mark.parametrize(
    "text",
    [f"start <private>{SECRET}\nmore", f"start <private reason='x'>{SECRET}", f'start <private reason="never closed {SECRET}'],
)
def test_an_unclosed_tag_is_private_to_the_end(text: str) -> None:
    assert redact_private(text) == f"start {MARK}"


def test_words_that_merely_start_with_private_are_not_the_tag() -> None:
    for text in ("<privateKey>abc</privateKey>", "<private-notes>x</private-notes>", "private static void main", "</private> stray close"):
        assert redact_private(text) == text


def test_a_self_closing_tag_is_an_empty_span() -> None:
    assert redact_private("a <private/> b") == f"a {MARK} b"


@given(st.lists(st.sampled_from(["<", ">", "/", " ", "\n", "private", "PRIVATE", "x", '"', "'", "\\n"]), max_size=40).map("".join))
def test_scanning_never_fails_and_never_grows_without_a_tag(text: str) -> None:
    out = redact_private(text)
    assert isinstance(out, str)
    if MARK not in out:
        assert out == text


def _long_output_with_a_span_in_the_middle() -> str:
    head = "".join(f"line {i} ok\n" for i in range(300))  # well past the head that is kept
    return head + f"<private>\n{'hidden middle ' * 40}\n{SECRET} is in the tail\n</private>\nall done\n"


def test_a_span_whose_opening_tag_falls_in_the_elided_middle_does_not_send_its_tail() -> None:
    text = _long_output_with_a_span_in_the_middle()
    assert len(text) > TEXT_MAX and text.index("<private>") > TEXT_MAX
    payload = {"tool_name": "Bash", "tool_input": {"command": "./run.sh"}, "tool_response": {"stdout": text, "stderr": ""}, "cwd": "/tmp"}
    event = event_from_payload("PostToolUse", payload, "e1", "2026-11-26T10:00:00Z")
    assert SECRET not in event["text"] and "hidden middle" not in event["text"]
    assert "all done" in event["text"]  # the tail after the span is still there
    assert SECRET not in redact_batch([event])[0]["text"]
    assert SECRET not in bounded(text)


def test_a_private_span_in_a_file_path_never_reaches_paths_or_data() -> None:
    path = f"/tmp/app/<private>{SECRET}</private>/notes.md"
    payload = {
        "tool_name": "Edit",
        "tool_input": {"file_path": path, "old_string": "a", "new_string": f"b <private>{SECRET}</private>"},
        "tool_response": {"filePath": path},
        "cwd": "/tmp/app",
    }
    event = event_from_payload("PostToolUse", payload, "e1", "2026-11-26T10:00:00Z")
    assert SECRET not in repr(event)
    assert any(MARK in p for p in event["paths"])
    assert SECRET not in repr(redact_batch([event]))


def test_a_prompt_span_is_removed_before_the_prompt_is_cut() -> None:
    prompt = "x " * 2000 + f"<private>{'y ' * 600}{SECRET}</private> and then the question"
    event = event_from_payload("UserPromptSubmit", {"prompt": prompt, "cwd": "/tmp"}, "e1", "2026-11-26T10:00:00Z")
    assert SECRET not in event["text"]
    assert "the question" in event["text"]
