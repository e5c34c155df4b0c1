"""Weights, decay and focus: the formula of docs/architecture.md, under a frozen clock."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from freezegun import freeze_time
from hypothesis import given
from hypothesis import strategies as st

from rolling_graph.core.clock import iso, utcnow
from rolling_graph.core.config import DecaySettings, load_settings
from rolling_graph.core.decay import decay_graph, decayed_weight, hops_from, recency
from rolling_graph.core.focus import focus_cluster
from rolling_graph.core.model import make_edge, make_node, new_document
from rolling_graph.core.weights import strengthen, weaken
from rolling_graph.store.sidecar import SidecarStore

S = DecaySettings()
T0 = datetime(2026, 11, 25, 12, 0, tzinfo=UTC)


def _chain_graph(now: datetime) -> dict:
    """focus — a — b — c — d, plus an island."""
    doc = new_document("s", now=now)
    for nid in ("focus", "a", "b", "c", "d", "island"):
        doc["nodes"][nid] = make_node(nid, "technical", node_id=nid, weight=0.8, now=now - timedelta(days=2))
    doc["nodes"]["focus"]["last_activated"] = iso(now)
    for s, t in (("focus", "a"), ("a", "b"), ("b", "c"), ("c", "d")):
        doc["edges"][f"{s}|informs|{t}"] = make_edge(s, "informs", t, now=now)
    doc["focus"] = ["focus"]
    doc["last_decay_at"] = iso(now)
    return doc


def test_hops_are_counted_in_either_direction_and_capped() -> None:
    doc = _chain_graph(T0)
    hops = hops_from(["focus"], doc["nodes"], doc["edges"], cap=4)
    assert hops == {"focus": 0, "a": 1, "b": 2, "c": 3, "d": 4, "island": 4}


@given(st.lists(st.tuples(st.integers(0, 9), st.integers(0, 9)), max_size=25), st.lists(st.integers(0, 11), max_size=3), st.integers(1, 5))
def test_hops_are_the_shortest_undirected_distances_capped(pairs: list[tuple[int, int]], focus: list[int], cap: int) -> None:
    nodes = {f"n{i}": {} for i in range(10)}
    edges = {f"n{a}|informs|n{b}": {"source": f"n{a}", "target": f"n{b}"} for a, b in pairs}
    # Reference: repeated relaxation until nothing changes (Bellman-Ford on unit weights).
    want = {nid: (0 if nid in {f"n{i}" for i in focus} else cap) for nid in nodes}
    changed = True
    while changed:
        changed = False
        for a, b in pairs:
            for x, y in ((f"n{a}", f"n{b}"), (f"n{b}", f"n{a}")):
                if want[x] + 1 < want[y]:
                    want[y], changed = want[x] + 1, True
    assert hops_from([f"n{i}" for i in focus], nodes, edges, cap) == want  # type: ignore[arg-type]


def test_the_formula_for_one_node() -> None:
    # weight * (1 - rate * hops * (1 - recency)) * time_factor, with no time elapsed
    assert decayed_weight(0.8, 2, 0.0, 0.0, S) == pytest.approx(0.8 * (1 - S.decay_rate * 2))
    # one time half-life elapsed halves what is left
    assert decayed_weight(0.8, 0, 1.0, S.time_half_life_hours, S) == pytest.approx(0.4)


def test_nodes_far_from_focus_decay_faster() -> None:
    with freeze_time(T0):
        doc = _chain_graph(utcnow())
        decay_graph(doc, utcnow(), S)
    w = {nid: n["weight"] for nid, n in doc["nodes"].items()}
    assert w["focus"] > w["a"] > w["b"] > w["c"] > w["d"]
    assert w["island"] == w["d"], "unreachable counts as the maximum distance"


def test_recently_activated_nodes_resist_distance_decay() -> None:
    with freeze_time(T0):
        doc = _chain_graph(utcnow())
        doc["nodes"]["c"]["last_activated"] = iso(utcnow())  # just touched, three hops away
        decay_graph(doc, utcnow(), S)
    assert doc["nodes"]["c"]["weight"] == pytest.approx(0.8)
    assert doc["nodes"]["b"]["weight"] < 0.8


def test_recency_halves_every_half_life() -> None:
    assert recency(T0, T0, 2.0) == 1.0
    assert recency(T0 - timedelta(hours=2), T0, 2.0) == pytest.approx(0.5)
    assert recency(None, T0, 2.0) == 0.0


def test_time_decay_composes_however_often_it_runs() -> None:
    once = _chain_graph(T0)
    often = _chain_graph(T0)
    for doc in (once, often):
        doc["edges"] = {}
        doc["focus"] = list(doc["nodes"])  # distance plays no part here
    decay_graph(once, T0 + timedelta(hours=48), S)
    for h in range(6, 49, 6):
        decay_graph(often, T0 + timedelta(hours=h), S)
    for nid in once["nodes"]:
        assert once["nodes"][nid]["weight"] == pytest.approx(often["nodes"][nid]["weight"], abs=2e-3)


def test_anchors_never_decay_below_their_floor() -> None:
    with freeze_time(T0):
        doc = _chain_graph(utcnow())
        doc["nodes"]["island"].update(anchor=True, floor=0.2, weight=0.21)
        for day in range(1, 60):
            decay_graph(doc, T0 + timedelta(days=day), S)
    assert doc["nodes"]["island"]["weight"] == 0.2
    assert doc["nodes"]["d"]["weight"] < 0.05


def test_focus_is_three_to_five_most_active_and_skips_superseded() -> None:
    with freeze_time(T0):
        now = utcnow()
        doc = new_document("s", now=now)
        for i in range(10):
            doc["nodes"][f"n{i}"] = make_node(f"n{i}", "project", node_id=f"n{i}", weight=0.9 - i * 0.05, now=now)
        doc["edges"]["n1|supersedes|n0"] = make_edge("n1", "supersedes", "n0", now=now)
        focus = focus_cluster(doc, now, S)
    assert 3 <= len(focus) <= 5
    assert "n0" not in focus, "the superseded decision never leads"
    assert focus[0] == "n1"


def test_focus_prefers_what_is_being_worked_on_now() -> None:
    with freeze_time(T0):
        now = utcnow()
        doc = new_document("s", now=now)
        doc["nodes"]["old"] = make_node("old", "project", node_id="old", weight=0.9, now=now - timedelta(days=1))
        for i in range(3):
            doc["nodes"][f"new{i}"] = make_node(f"new{i}", "project", node_id=f"new{i}", weight=0.6, now=now)
        focus = focus_cluster(doc, now, S)
    assert focus[:3] == ["new0", "new1", "new2"]


def test_a_small_graph_has_a_small_focus() -> None:
    doc = new_document("s", now=T0)
    doc["nodes"]["only"] = make_node("only", "project", node_id="only", now=T0)
    assert focus_cluster(doc, T0, S) == ["only"]
    assert focus_cluster(new_document("s", now=T0), T0, S) == []


def test_probe_cycles_decay_what_the_session_left_behind() -> None:
    """Through the store: a node untouched while work moves elsewhere loses weight."""
    store = SidecarStore(load_settings())
    with freeze_time(T0) as clock:
        store.apply_ops("s1", [{"op": "add", "path": "/nodes/old-topic", "value": make_node("Old topic", "project", weight=0.7)}], kind="patch", rationale="r")
        for i in range(6):
            clock.tick(timedelta(hours=3))
            node = make_node(f"New thing {i}", "technical", weight=0.7)
            with store.transaction("s1") as doc:
                store.commit_entry(doc, {"kind": "patch", "rationale": "r", "ops": [{"op": "add", "path": f"/nodes/{node['id']}", "value": node}], "decay_at": iso(utcnow())})
        doc = store.load("s1")
    assert doc["nodes"]["old-topic"]["weight"] < 0.6
    assert "old-topic" not in doc["focus"]


unit = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)


@given(w=unit, hops=st.integers(min_value=-3, max_value=50), rec=unit, elapsed=st.floats(min_value=0, max_value=1e5), floor=unit)
def test_decay_keeps_weights_in_unit_range_and_above_floor(w: float, hops: int, rec: float, elapsed: float, floor: float) -> None:
    out = decayed_weight(w, hops, rec, elapsed, S, floor)
    assert 0.0 <= out <= 1.0
    assert out >= floor or out == 1.0
    assert out <= max(w, floor)


@given(w=unit, gain=unit, loss=unit, floor=unit)
def test_strengthen_and_weaken_stay_in_unit_range(w: float, gain: float, loss: float, floor: float) -> None:
    up, down = strengthen(w, gain), weaken(w, loss, floor)
    assert w <= up <= 1.0
    assert 0.0 <= down <= 1.0 and down >= floor
