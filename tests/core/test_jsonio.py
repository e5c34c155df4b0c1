"""The hook's JSON codec agrees with the standard library, including on bad input."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rolling_graph.core import jsonio

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda children: st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=10), children, max_size=5),
    max_leaves=30,
)


@settings(max_examples=200, deadline=None)
@given(JSON_VALUES)
def test_round_trips_like_the_standard_library(value: object) -> None:
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    assert jsonio.dumps(value) == text
    assert jsonio.loads(text) == json.loads(text)
    assert jsonio.loads(text.encode("utf-8")) == value


def test_special_numbers_and_whitespace() -> None:
    assert math.isnan(jsonio.loads("NaN"))
    assert jsonio.loads(' \n {"x": Infinity} \t') == {"x": math.inf}


@pytest.mark.parametrize("bad", ["", "  ", "{", "[1,]", '{"a" 1}', "1 2", '"open', '{"a":1}x', "{not json"])
def test_invalid_documents_raise_value_error(bad: str) -> None:
    with pytest.raises(ValueError):
        jsonio.loads(bad)


def test_invalid_documents_raise_value_error_in_a_fresh_process() -> None:
    """Where ``json.decoder`` was never imported (the hook process), too."""
    code = "from rolling_graph.core import jsonio\ntry:\n    jsonio.loads('{not json')\nexcept ValueError:\n    print('ValueError')\n"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30)
    assert out.stdout.strip() == "ValueError", out.stderr


def test_a_line_with_rows_appended_gives_every_document_up_to_the_first_invalid_one() -> None:
    # Claude Code now and then appends a row to a line it did not end: both rows are the transcript's.
    assert jsonio.documents('{"type":"assistant"}{"type":"summary"}\n') == [{"type": "assistant"}, {"type": "summary"}]
    assert jsonio.documents(b'{"a":1} [2] {broken') == [{"a": 1}, [2]]
    assert jsonio.documents('{"a":1}') == [{"a": 1}]
    assert jsonio.documents("{broken") == [] and jsonio.documents("   ") == []


def test_unserialisable_values_need_a_default() -> None:
    with pytest.raises(TypeError):
        jsonio.dumps({"x": object()})
    assert jsonio.dumps({"x": 1j}, default=str) == '{"x":"1j"}'
