"""Ranking names for the restore block: edits over reads, user-named over tool-touched,
recency and frequency fused; deterministic and monotonic."""

from __future__ import annotations

import random
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from rolling_graph.core.normalize import normalize_node
from rolling_graph.render.rank import PRESETS, competition_ranks, fractional_ranks, rank, scores


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


def test_after_a_compaction_what_the_session_kept_using_leads_not_the_last_writes_names() -> None:
    """The ``compact`` preset: use counts twice the last touch. One Write of a new file
    touches its many names at one event; by recency alone they would all lead together."""
    nodes = {f"used-{i:02d}": name("symbol", seq=i, mentions=2 + i % 3) for i in range(1, 31)}
    nodes["kept"] = name("symbol", seq=20, mentions=8)
    nodes.update({f"write-{i}": name("symbol", seq=31, mentions=1) for i in range(10)})
    ranked = rank(nodes, settings=PRESETS["compact"])
    assert ranked[0] == "used-29" and ranked.index("kept") < 3
    assert ranked.index("used-29") < ranked.index("used-26"), "among names used as often, the later leads"
    used_most = [f"used-{i:02d}" for i in range(1, 31) if i % 3 == 2]  # four uses each
    assert max(ranked.index(n) for n in used_most) < min(ranked.index(f"write-{i}") for i in range(10))
    assert rank(nodes)[0] != "write-0" and rank(nodes, settings=PRESETS["recent"])[0] == "write-0"


def test_event_counter_orders_recency_before_the_clock() -> None:
    nodes = {"late-clock": name("symbol", seq=2, stamp="2026-11-25T12:00:00Z"), "late-seq": name("symbol", seq=9, stamp="2026-11-25T09:00:00Z")}
    assert rank(nodes) == ["late-seq", "late-clock"]


def test_ties_share_a_rank() -> None:
    assert competition_ranks({"a": 3, "b": 5, "c": 3, "d": 1}) == {"b": 1, "a": 2, "c": 2, "d": 4}
    assert fractional_ranks({"a": 3, "b": 5, "c": 3, "d": 1}) == {"b": 1, "a": 2.5, "c": 2.5, "d": 4}


@given(st.dictionaries(st.text(max_size=3), st.integers(0, 4), max_size=12))
def test_fractional_ranks_keep_the_order_and_the_sum_of_positions(keys: dict[str, int]) -> None:
    ranks = fractional_ranks(keys)
    assert sum(ranks.values()) == sum(range(1, len(keys) + 1))
    assert all((ranks[a] < ranks[b]) == (keys[a] > keys[b]) for a in keys for b in keys)


def test_names_one_event_touched_together_share_the_recency_they_span() -> None:
    """A Write of a new file touches its 60 names at one event: by recency they span
    positions 1–60, not 1 each, so a name used three times just before outranks them."""
    nodes = {f"write-{i:02d}": name("symbol", seq=50, mentions=1) for i in range(60)}
    nodes["steady"] = name("symbol", seq=45, mentions=3)
    nodes.update({f"old-{i:02d}": name("symbol", seq=i, mentions=1 + i % 2) for i in range(40)})
    fused = scores(nodes)
    assert fused["steady"] > fused["write-00"] > fused["old-38"]
    assert len({fused[f"write-{i:02d}"] for i in range(60)}) == 1, "tied names stay tied"


def test_a_node_with_malformed_fields_ranks_as_the_loader_normalised_it() -> None:
    raw = {"kind": "file", "weight": "heavy", "activations": True, "last_activated": 7, "facts": {"edits": "many", "seq": 3.5, "reads": -4}}
    nodes = {"bad": normalize_node("bad", raw), "good": normalize_node("good", name(edits=1))}
    assert rank(nodes) == ["good", "bad"]


@given(_nodes, st.data(), st.sampled_from(["edits", "mentions"]), st.sampled_from(sorted(PRESETS)))
def test_more_edits_or_mentions_never_rank_a_name_lower(nodes: dict[str, dict[str, Any]], data: st.DataObject, key: str,
                                                        preset: str) -> None:
    nid = data.draw(st.sampled_from(sorted(nodes)))
    before = rank(nodes, settings=PRESETS[preset]).index(nid)
    bumped = dict(nodes)
    bumped[nid] = {**nodes[nid], "facts": {**nodes[nid]["facts"], key: nodes[nid]["facts"].get(key, 0) + data.draw(st.integers(1, 4))}}
    assert rank(bumped, settings=PRESETS[preset]).index(nid) <= before


@given(_nodes, st.data())
def test_being_named_by_the_user_or_touched_later_never_ranks_a_name_lower(nodes: dict[str, dict[str, Any]], data: st.DataObject) -> None:
    nid = data.draw(st.sampled_from(sorted(nodes)))
    before = rank(nodes).index(nid)
    facts = nodes[nid]["facts"]
    later = max((n["facts"].get("seq", -1) for n in nodes.values()), default=0) + 1
    for change in ({"by": "user"}, {"seq": later}):
        assert rank({**nodes, nid: {**nodes[nid], "facts": {**facts, **change}}}).index(nid) <= before


@given(_nodes, st.randoms(use_true_random=False))
def test_ranking_is_deterministic_whatever_the_order_nodes_come_in(nodes: dict[str, dict[str, Any]], rnd: random.Random) -> None:
    items = list(nodes.items())
    rnd.shuffle(items)
    assert rank(dict(items)) == rank(nodes)
    assert sorted(rank(nodes)) == sorted(nodes)


@given(_nodes)
def test_every_preset_ranks_every_name_once_with_a_positive_score(nodes: dict[str, dict[str, Any]]) -> None:
    for preset in PRESETS.values():
        fused = scores(nodes, settings=preset)
        assert set(fused) == set(nodes) and all(v > 0 for v in fused.values())
