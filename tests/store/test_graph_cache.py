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


def test_the_cache_gives_the_graph_whole_or_its_nodes_alone(tmp_path: Any) -> None:
    """The edges are a part of their own: read whole, the graph as written; read without them,
    the same nodes and an ``EdgesNotRead`` that refuses every read rather than tell "no edges"."""
    import os

    import pytest

    from rolling_graph.store.graph_cache import EdgesNotRead, blob, read, signature

    graph = {"version": 1, "nodes": {"a": {"id": "a", "kind": "file"}, "b": {"id": "b", "kind": "symbol"}},
             "edges": {"a|defines|b": {"source": "a", "relationship": "defines", "target": "b"}}, "journal_seq": 3}
    made = tmp_path / "graph.json"
    made.write_text("{}")
    st = os.stat(made)
    cache = tmp_path / "graph.cache"
    cache.write_bytes(blob(graph, signature(st)))  # type: ignore[arg-type]
    assert read(str(cache), st) == graph
    nodes_only = read(str(cache), st, edges=False)
    assert nodes_only is not None and nodes_only["nodes"] == graph["nodes"] and nodes_only["journal_seq"] == 3
    assert isinstance(nodes_only["edges"], EdgesNotRead)
    with pytest.raises(RuntimeError, match="edges were not read"):
        list(nodes_only["edges"])
