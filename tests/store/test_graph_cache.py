"""store/graph_cache.py: the read cache's shared strings change nothing but object identity."""

from __future__ import annotations

import marshal
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from rolling_graph.store.graph_cache import shared_values

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | st.sampled_from(["fact", "decision", "2026-11-29T10:00:00Z"])
    | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(["kind", "label", "weight", "facts"]) | st.text(max_size=5), inner, max_size=4
        )
    ),
    max_leaves=30,
)


def _strings(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (*_strings(k), *_strings(v))]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return [value] if isinstance(value, str) else []


@given(json_values)
def test_the_shared_value_equals_the_value_and_round_trips_through_marshal(value: Any) -> None:
    shared = shared_values(value)
    assert shared == value
    assert marshal.loads(marshal.dumps(shared)) == value
    strings = _strings(shared)
    by_text: dict[str, str] = {}
    for s in strings:  # equal strings are one object
        assert by_text.setdefault(s, s) is s


def test_a_graph_shares_kinds_timestamps_and_ids_and_its_types_survive() -> None:
    stamp = "2026-11-29T10:00:00Z"
    graph = {
        "nodes": {
            f"n{i}": {
                "kind": "decision".upper().lower(),
                "last_activated": "".join(stamp),
                "weight": 0.5,
                "pulled": True,
                "sources": ["e1"],
                "facts": {"edits": 2},
            }
            for i in range(3)
        },
        "edges": {"n0|informs|n1": {"source": "n0", "target": "n1", "strength": 1, "superseded": None}},
    }
    shared = shared_values(graph)
    assert shared == graph
    a, b = shared["nodes"]["n0"], shared["nodes"]["n2"]
    assert a["kind"] is b["kind"] and a["last_activated"] is b["last_activated"]
    assert type(a["pulled"]) is bool and type(shared["edges"]["n0|informs|n1"]["strength"]) is int
    assert len(marshal.dumps(shared)) < len(marshal.dumps(graph))
