"""Co-access arithmetic: weight = sessions touching both ÷ sessions touching either;
direction = the share of those sessions in which one came first."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rolling_graph.core.coaccess import co_access, first_touches, kept_pairs, pair_key, partners, recency_say


def test_two_files_always_touched_together_weigh_one_and_lead_in_the_order_they_were_opened() -> None:
    pairs = co_access([(["b.py", "a.py"], 1.0, True), (["b.py", "a.py", "c.py"], 1.0, True)])
    ab = pairs[("a.py", "b.py")]
    assert (ab.weight, ab.both, ab.either) == (1.0, 2, 2)
    assert ab.a_first == 0.0  # b.py came first both times


def test_weight_is_sessions_touching_both_over_sessions_touching_either() -> None:
    sessions = [(["a", "b"], 1.0, True), (["a"], 1.0, True), (["b", "c"], 1.0, True), (["a", "b"], 1.0, True)]
    ab = co_access(sessions)[("a", "b")]
    # both: sessions 1 and 4; either: 1, 2, 3, 4
    assert (ab.both, ab.either, ab.weight) == (2, 4, 0.5)
    assert ab.a_first == 1.0


def test_direction_is_the_share_of_shared_sessions_in_which_one_came_first() -> None:
    sessions = [(["a", "b"], 1.0, True), (["a", "b"], 1.0, True), (["b", "a"], 1.0, True), (["a", "b"], 1.0, True)]
    assert co_access(sessions)[("a", "b")].a_first == 0.75


def test_an_older_session_says_less_so_a_pair_recent_sessions_split_fades() -> None:
    old_together = (["a", "b"], recency_say(24 * 60, 24 * 14), True)
    recent_apart = [(["a", "x"], 1.0, True), (["b", "y"], 1.0, True)]
    faded = co_access([old_together, *recent_apart])[("a", "b")].weight
    plain = co_access([(["a", "b"], 1.0, True), *recent_apart])[("a", "b")].weight
    assert faded < 0.1 < plain


def test_a_commit_counts_for_the_weight_but_not_the_order() -> None:
    pairs = co_access([(["a", "b"], 1.0, False), (["a", "b"], 1.0, False)])
    assert pairs[("a", "b")].weight == 1.0
    assert pairs[("a", "b")].a_first == 0.5


def test_a_session_counts_its_first_touched_files_only_once_each() -> None:
    assert first_touches(["a", "b", "a", "", "c"], max_files=2) == ["a", "b"]
    pairs = co_access([([f"f{i}" for i in range(50)], 1.0, True)], max_files=3)
    assert set(pairs) == {("f0", "f1"), ("f0", "f2"), ("f1", "f2")}


def test_partners_are_strongest_first_and_say_who_leads() -> None:
    pairs = co_access([(["a", "b", "c"], 1.0, True), (["a", "b"], 1.0, True)])
    found = partners(pairs, limit=5)
    assert [p for p, _, _ in found["a"]] == ["b", "c"]
    assert found["b"][0] == ("a", 1.0, 0.0)  # a always came before b
    # each file keeps its strongest partner: a and b each other, c its tie broken by name (a)
    assert set(kept_pairs(pairs, 1)) == {("a", "b"), ("a", "c")}


def test_recency_say_halves_each_half_life() -> None:
    assert recency_say(0, 10) == 1.0
    assert recency_say(10, 10) == pytest.approx(0.5)
    assert recency_say(99, 0) == 1.0


files = st.lists(st.sampled_from(["a", "b", "c", "d", "e"]), max_size=6)
sessions_st = st.lists(st.tuples(files, st.floats(min_value=0.01, max_value=1.0), st.booleans()), max_size=12)


@given(sessions_st)
def test_weights_and_directions_stay_within_zero_and_one(sessions: list[tuple[list[str], float, bool]]) -> None:
    for (a, b), pair in co_access(sessions).items():
        assert a < b
        assert 0.0 <= pair.weight <= 1.0
        assert 0.0 <= pair.a_first <= 1.0
        assert 1 <= pair.both <= pair.either


@given(sessions_st)
def test_the_order_of_the_sessions_does_not_matter(sessions: list[tuple[list[str], float, bool]]) -> None:
    forward, backward = co_access(sessions), co_access(list(reversed(sessions)))
    assert set(forward) == set(backward)
    for key, pair in forward.items():
        assert (pair.both, pair.either) == (backward[key].both, backward[key].either)
        assert pair.weight == pytest.approx(backward[key].weight, abs=1e-3)
        assert pair.a_first == pytest.approx(backward[key].a_first, abs=1e-3)


@given(sessions_st)
def test_partners_see_the_same_pair_from_both_ends(sessions: list[tuple[list[str], float, bool]]) -> None:
    pairs = co_access(sessions)
    found = partners(pairs, limit=10)
    for (a, b), pair in pairs.items():
        there = {o: (w, lead) for o, w, lead in found[a]}
        back = {o: (w, lead) for o, w, lead in found[b]}
        assert there[b][0] == back[a][0] == pair.weight
        assert there[b][1] + back[a][1] == pytest.approx(1.0, abs=1e-3)
    assert all(pair_key(x, y) == pair_key(y, x) for x, y in pairs)
