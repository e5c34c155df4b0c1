"""Ranking names for the restore block: edits over reads, user-named over tool-touched,
recency and frequency fused; deterministic and monotonic."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from rolling_graph.render.rank import PRESETS, rank


def name(kind: str = "file", *, edits: int = 0, writes: int = 0, reads: int = 0, runs: int = 0, seq: int | None = None,
         by: str | None = None, weight: float = 0.5, activations: int = 1, stamp: str = "2026-11-25T10:00:00Z",
         outcome: str | None = None, state: str | None = None, mentions: int = 0) -> dict[str, Any]:
    facts: dict[str, Any] = {k: v for k, v in (("edits", edits), ("writes", writes), ("reads", reads), ("runs", runs),
                                               ("mentions", mentions)) if v}
    for key, value in (("seq", seq), ("by", by), ("outcome", outcome), ("state", state)):
        if value is not None:
            facts[key] = value
    return {"kind": kind, "weight": weight, "activations": activations, "last_activated": stamp, "facts": facts}


_nodes = st.dictionaries(
    st.text(alphabet="abcdefgh", min_size=1, max_size=4),
    st.builds(
        name,
        kind=st.sampled_from(["file", "symbol", "command", "error", "entity", "concept"]),
        edits=st.integers(0, 5), writes=st.integers(0, 2), reads=st.integers(0, 5), runs=st.integers(0, 3),
        mentions=st.integers(0, 6), seq=st.one_of(st.none(), st.integers(0, 50)), by=st.sampled_from([None, "user", "tool", "assistant"]),
        weight=st.floats(0, 1), activations=st.integers(0, 9),
    ),
    min_size=1, max_size=12,
)


def test_an_edited_file_outranks_one_only_read_as_often() -> None:
    nodes = {"read": name(reads=4, seq=10), "edited": name(edits=4, seq=10)}
    assert rank(nodes) == ["edited", "read"]


def test_what_the_user_named_outranks_what_a_tool_touched() -> None:
    nodes = {"tool": name("symbol", by="tool", seq=5), "user": name("symbol", by="user", seq=5)}
    assert rank(nodes) == ["user", "tool"]


def test_recency_and_frequency_are_fused_so_the_all_round_name_wins() -> None:
    """Touched most but long ago, touched last but once, or near the top on both."""
    nodes = {"old-heavy": name(edits=9, seq=1), "new-once": name(edits=1, seq=40), "steady": name(edits=6, seq=38),
             "mid-a": name(edits=3, seq=20), "mid-b": name(edits=2, seq=10)}
    assert rank(nodes)[0] == "steady"


def test_a_name_the_session_keeps_using_outranks_one_used_once_as_recently() -> None:
    nodes = {"once": name("symbol", seq=30, mentions=1), "often": name("symbol", seq=30, mentions=7)}
    assert rank(nodes) == ["often", "once"]


def test_after_a_compaction_the_last_touch_counts_twice_what_use_does() -> None:
    """The ``compact`` preset, chosen over the corpus's 34 compactions pooled: the work after
    a compaction goes on with what was touched last, so the names of the last events lead,
    the one used most among them first; a name used much but earlier follows them, ahead of
    names used as rarely as long ago."""
    nodes = {f"used-{i:02d}": name("symbol", seq=i, mentions=2 + i % 3) for i in range(1, 31)}
    nodes["kept"] = name("symbol", seq=20, mentions=8)
    nodes.update({f"write-{i}": name("symbol", seq=31, mentions=1) for i in range(10)})
    ranked = rank(nodes, settings=PRESETS["compact"])
    assert ranked[0] == "used-29", "recent and used four times"
    assert max(ranked.index(f"write-{i}") for i in range(10)) < ranked.index("kept") < ranked.index("used-20")
    assert ranked.index("used-29") < ranked.index("used-26"), "among names used as often, the later leads"
    assert ranked.index("kept") < min(ranked.index(f"used-{i:02d}") for i in range(1, 20)), "use still counts"
