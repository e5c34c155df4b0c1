"""Merge math, ranking and the resume snapshot ops: pure functions, no database."""

from __future__ import annotations

import dataclasses
import json
import marshal
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from rolling_graph.core.model import make_node, new_document
from rolling_graph.warm import merge, rank, snapshot, snapshot_files
from rolling_graph.warm.snapshot_write import snapshot_path, write_snapshot

T0 = datetime(2026, 11, 1, tzinfo=UTC)

weights = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)
contribution = st.builds(
    merge.Contribution,
    session_id=st.sampled_from(["a", "b", "c", "d", "e"]),
    weight=weights,
    last_activated=st.integers(min_value=0, max_value=24 * 60).map(lambda h: T0 + timedelta(hours=h)),
)


def unique(cs: list[merge.Contribution]) -> list[merge.Contribution]:
    out: list[merge.Contribution] = []
    for c in cs:
        out = merge.upsert_contribution(out, c)
    return out


def test_new_node_enters_with_a_penalty() -> None:
    c = merge.Contribution("s1", 0.8, T0)
    assert merge.node_weight([c]) == 0.8 * (1 - merge.DEFAULT_POLICY.new_node_penalty)


def test_newer_session_dominates_the_recency_weighted_average() -> None:
    old = merge.Contribution("s1", 0.9, T0)
    new = merge.Contribution("s2", 0.1, T0 + timedelta(days=30))
    merged = merge.recency_average(0.9, old.last_activated, 0.1, new.last_activated)
    assert 0.1 < merged < 0.15  # the month-old view has almost no say
    same_time = merge.recency_average(0.8, T0, 0.4, T0)
    assert abs(same_time - 0.6) < 1e-9


def test_each_extra_session_raises_weight() -> None:
    one = merge.node_weight([merge.Contribution("s1", 0.5, T0)])
    two = merge.node_weight([merge.Contribution("s1", 0.5, T0), merge.Contribution("s2", 0.5, T0 + timedelta(hours=1))])
    three = merge.node_weight(
        [merge.Contribution(f"s{i}", 0.5, T0 + timedelta(hours=i)) for i in range(3)]
    )
    assert one < two < three


def test_anchor_keeps_its_floor() -> None:
    assert merge.node_weight([merge.Contribution("s", 0.0, T0)], anchor=True, floor=0.2) == 0.2
    assert merge.node_weight([merge.Contribution("s", 0.0, T0)], anchor=False, floor=0.2) == 0.0


def test_supersedes_edge_keeps_its_strongest_view() -> None:
    cs = [merge.Contribution("s1", 0.9, T0), merge.Contribution("s2", 0.1, T0 + timedelta(days=10))]
    assert merge.edge_strength("supersedes", cs) == 0.9
    assert merge.edge_strength("informs", cs) < 0.2


def test_corrections_outrank_every_other_confidence() -> None:
    assert merge.merge_confidence("observed", "correction") == "correction"
    assert merge.merge_confidence("correction", "inferred") == "correction"
    assert merge.merge_confidence(None, "bogus") == "inferred"


@given(st.lists(contribution, max_size=8), st.booleans(), weights, st.one_of(st.none(), weights))
def test_node_weight_stays_in_unit_interval(cs: list[merge.Contribution], anchor: bool, floor: float, seed: float | None) -> None:
    w = merge.node_weight(unique(cs), anchor=anchor, floor=floor, seed_weight=seed, seed_time=T0)
    assert 0.0 <= w <= 1.0
    if anchor:
        assert w >= floor


@given(st.lists(contribution, min_size=1, max_size=8), st.randoms())
def test_merge_is_idempotent_and_order_independent(cs: list[merge.Contribution], rnd) -> None:  # type: ignore[no-untyped-def]
    base = unique(cs)
    once = merge.node_weight(base)
    again = base
    for c in base:  # re-reconciling every session with the same state changes nothing
        again = merge.upsert_contribution(again, c)
    shuffled = list(again)
    rnd.shuffle(shuffled)
    assert merge.node_weight(shuffled) == once


@given(st.lists(contribution, min_size=1, max_size=6), weights)
def test_replacing_a_session_contribution_never_counts_it_twice(cs: list[merge.Contribution], w: float) -> None:
    base = unique(cs)
    first = base[0]
    replaced = merge.upsert_contribution(base, merge.Contribution(first.session_id, w, first.last_activated))
    assert len(replaced) == len(base)
    assert 0.0 <= merge.node_weight(replaced) <= 1.0


@given(st.lists(contribution, min_size=1, max_size=8), st.sampled_from(["supersedes", "informs"]))
def test_edge_strength_stays_in_unit_interval(cs: list[merge.Contribution], rel: str) -> None:
    assert 0.0 <= merge.edge_strength(rel, unique(cs)) <= 1.0


def test_hops_are_counted_both_ways_and_capped() -> None:
    hops = rank.hops_from(["a"], [("a", "b"), ("c", "b"), ("c", "d")], max_hops=2)
    assert hops == {"a": 0, "b": 1, "c": 2}


def test_recent_focus_outranks_an_old_heavy_node() -> None:
    now = T0 + timedelta(days=20)
    pool = [
        rank.Candidate("old-heavy", 0.95, T0, session_count=6),
        rank.Candidate("focus", 0.5, now - timedelta(hours=1), session_count=1, hops=0),
        rank.Candidate("neighbour", 0.4, now - timedelta(hours=2), session_count=1, hops=1),
    ]
    assert rank.rank(pool, now)[0] == "focus"


def test_on_resume_what_sessions_used_most_counts_most() -> None:
    """A new session needs what earlier ones kept using (on ../shared/corpus/entire-cli the
    earlier sessions' most frequent names recall 0.376 of what the next one uses, their most
    recent 0.318): uses count six times, recent uses (where known) twelve."""
    now = T0 + timedelta(days=1)
    pool = [rank.Candidate("heavy-recent", 0.9, now - timedelta(hours=1), session_count=1, activations=2),
            rank.Candidate("used-most", 0.4, now - timedelta(hours=30), session_count=1, activations=40)]
    for i in range(10):  # between the two on every leg
        pool.append(rank.Candidate(f"other-{i}", 0.5 + i / 100, now - timedelta(hours=5 + i), session_count=1, activations=5 + i))

    def before(settings: rank.RankSettings) -> bool:
        order = rank.rank(pool, now, settings)
        return order.index("used-most") < order.index("heavy-recent")

    assert not before(rank.RankSettings())  # every leg counted once: best on two legs wins
    assert before(rank.RESUME)
    weights = dict(rank.RESUME.leg_weights)
    assert weights["recent_uses"] == 2 * weights["uses"] == max(weights.values())


def test_on_resume_a_name_many_sessions_came_back_to_beats_one_session_s_burst() -> None:
    """Cross-session frequency counts eight times: of two names the last sessions used about
    as much, the one that many sessions used comes first, though one session used the other
    a little more (on ../shared/corpus/entire-cli: 0.362 -> 0.370 of a new session's names
    at 800 tokens)."""
    now = T0 + timedelta(days=10)
    pool = [rank.Candidate("everywhere", 0.5, now, session_count=12, activations=20, recent_uses=2.0),
            rank.Candidate("one-burst", 0.5, now, session_count=1, activations=24, recent_uses=2.5)]
    # Between the two on frequency only; below both on uses.
    pool += [rank.Candidate(f"filler-{i}", 0.5, now, session_count=2 + i, activations=1, recent_uses=0.1) for i in range(9)]
    assert rank.rank(pool, now, rank.RESUME)[0] == "everywhere"
    without = dataclasses.replace(rank.RESUME, leg_weights=tuple((leg, w) for leg, w in rank.RESUME.leg_weights if leg != "frequency"))
    assert rank.rank(pool, now, without)[0] == "one-burst"
    assert dict(rank.RESUME.leg_weights)["frequency"] == 8.0


def test_openings_are_the_discovery_order_and_one_event_shares_a_place() -> None:
    seen = {"late": T0 + timedelta(minutes=9), "first-a": T0, "first-b": T0, "middle": T0 + timedelta(minutes=2)}
    assert rank.openings(seen) == {"first-a": 1, "first-b": 1, "middle": 3, "late": 4}
    assert rank.openings({}) == {}


@given(st.dictionaries(st.text(min_size=1, max_size=4), st.integers(0, 50), max_size=30))
def test_openings_follow_first_seen(minutes: dict[str, int]) -> None:
    seen = {nid: T0 + timedelta(minutes=m) for nid, m in minutes.items()}
    places = rank.openings(seen)
    assert set(places) == set(seen)
    for a in seen:
        assert 1 <= places[a] <= len(seen)
        for b in seen:
            assert (places[a] < places[b]) == (seen[a] < seen[b])


def test_on_resume_the_names_a_session_opened_with_come_first_when_the_opening_leg_is_on() -> None:
    """A new session reads its way in as the last one did: among names used as often, those
    the last session touched first come before those it touched last (the opening leg, off
    by default since recent uses rank better: see the next test)."""
    now = T0 + timedelta(days=1)
    pool = [rank.Candidate(f"opened-{i}", 0.5, now - timedelta(hours=6, minutes=i), activations=1, opening=1 + i)
            for i in range(5)]
    pool += [rank.Candidate(f"ended-{i}", 0.5, now - timedelta(hours=1, minutes=i), activations=1, opening=100 + i)
             for i in range(5)]
    without = rank.rank(pool, now, rank.RankSettings(leg_weights=(("uses", 3.0),), opening_leg=False))
    with_opening = rank.rank(pool, now, rank.RankSettings(leg_weights=(("uses", 6.0), ("opening", 2.0))))
    assert without[:5] == [f"ended-{i}" for i in range(5)]  # recency alone decides
    assert with_opening[:2] == ["opened-0", "opened-1"]
    assert "opening" not in rank.legs(pool, now, rank.RESUME)
    # Prompt pulls answer a prompt, not a session's start: no opening leg there.
    assert "opening" not in rank.legs(pool, now, rank.PULL)


def test_on_resume_what_the_last_sessions_kept_using_beats_what_older_sessions_used_more() -> None:
    """Recent uses (each session's uses halved every two later sessions) count twice what
    uses over all sessions do: a name the last sessions kept using comes before one that
    older sessions used more in all, and before one touched late but used little."""
    now = T0 + timedelta(days=30)
    pool = [
        rank.Candidate("old-favourite", 0.5, now - timedelta(days=20), activations=40, recent_uses=1.0),
        rank.Candidate("current-work", 0.5, now - timedelta(days=1), activations=12, recent_uses=9.0),
        rank.Candidate("touched-once-lately", 0.5, now - timedelta(hours=1), activations=1, recent_uses=1.0),
    ]
    pool += [rank.Candidate(f"filler-{i}", 0.5, now - timedelta(days=25), activations=2, recent_uses=0.1) for i in range(5)]
    assert rank.rank(pool, now, rank.RESUME)[:2] == ["current-work", "old-favourite"]
    uses_only = rank.RankSettings(leg_weights=(("uses", 6.0), ("weight", 0.5)), opening_leg=False)
    assert rank.rank(pool, now, uses_only)[0] == "old-favourite"
    assert "recent_uses" not in rank.legs(pool, now, uses_only)  # no half-life: no leg
    assert "recent_uses" not in rank.legs(pool, now, rank.PULL)


def test_similarity_leg_lifts_a_prompt_match() -> None:
    now = T0
    pool = [rank.Candidate(f"n{i}", 0.5, T0, 1) for i in range(5)]
    pool.append(rank.Candidate("match", 0.5, T0, 1, similarity=0.9))
    assert rank.rank(pool, now, rank.PULL)[0] == "match"


def _snap() -> dict:
    return {
        "version": 1,
        "project": "/p",
        "nodes": [
            {"id": "use-postgresql", "label": "Use PostgreSQL", "domain": "technical", "kind": "decision", "weight": 0.7,
             "first_seen": "2026-11-01T00:00:00Z", "confidence": "observed"},
            {"id": "use-sqlite", "label": "Use SQLite", "domain": "technical", "kind": "decision", "weight": 0.2},
            {"id": "Bad Id!", "label": "x", "domain": "technical"},
        ],
        "edges": [
            {"source": "use-postgresql", "relationship": "supersedes", "target": "use-sqlite", "strength": 0.9},
            {"source": "use-postgresql", "relationship": "related_to", "target": "use-sqlite", "strength": 0.9},
        ],
    }


def test_snapshot_ops_add_only_what_the_hot_graph_lacks() -> None:
    doc = new_document("s", "/p", now=T0)
    doc["nodes"]["use-sqlite"] = make_node("Use SQLite", "technical", "decision", now=T0)
    ops = snapshot.snapshot_ops(doc, _snap(), T0 + timedelta(days=1))
    paths = [op["path"] for op in ops]
    assert paths == ["/nodes/use-postgresql", "/edges/use-postgresql|supersedes|use-sqlite"]
    added = ops[0]["value"]
    assert added["pulled"] is True and added["origin"] == "warm"
    assert added["last_activated"] == "2026-11-02T00:00:00Z"
    assert set(make_node("x", "technical")) <= set(added)
    assert all(op["op"] == "add" for op in ops)


def test_a_pulled_node_keeps_when_and_in_which_sessions_the_warm_graph_saw_it() -> None:
    snap = _snap()
    snap["nodes"][0].update({"warm_last_activated": "2026-11-01T09:00:00Z", "seen_in": ["s-late", "s-early", 7, "x" * 500]})
    ops = snapshot.snapshot_ops(new_document("s", "/p", now=T0), snap, T0 + timedelta(days=1))
    added = ops[0]["value"]
    assert added["seen_at"] == "2026-11-01T09:00:00Z"
    assert added["seen_in"][:2] == ["s-late", "s-early"] and all(len(s) <= 80 for s in added["seen_in"])
    assert "seen_in" not in ops[1]["value"]


def test_snapshot_ops_refuse_another_projects_snapshot_and_respect_bounds() -> None:
    doc = new_document("s", "/other", now=T0)
    assert snapshot.snapshot_ops(doc, _snap(), T0) == []
    doc = new_document("s", "/p", now=T0)
    assert len(snapshot.snapshot_ops(doc, _snap(), T0, max_nodes=1, max_edges=0)) == 1


def test_snapshot_round_trips_and_is_per_project(tmp_path) -> None:  # type: ignore[no-untyped-def]
    write_snapshot(tmp_path, "/p", _snap())
    assert snapshot.read_snapshot(tmp_path, "/p")["nodes"][0]["id"] == "use-postgresql"  # type: ignore[index]
    assert snapshot.read_snapshot(tmp_path, "/q") is None
    snapshot_path(tmp_path, "/p").write_text("{torn", encoding="utf-8")
    assert snapshot.read_snapshot(tmp_path, "/p") is None


def _big_snap(n: int = 30) -> dict:
    """A snapshot with files (facts), decisions and edges, and a few nodes a pull must refuse."""
    nodes = [{"id": f"src-f{i}-go", "label": f"src/f{i}.go", "domain": "technical", "kind": "file", "weight": 0.5 + i / 100,
              "facts": {"path": f"src/f{i}.go", "edits": i, "seq": 40 + i}, "seen_in": ["s-a"], "warm_last_activated": "2026-10-30T00:00:00Z"}
             for i in range(n)]
    nodes += [*_snap()["nodes"], {"id": "no-label"}, "not a node", {"id": "src-f1-go", "label": "again", "domain": "technical"}]
    edges = [{"source": f"src-f{i}-go", "relationship": "related_to", "target": f"src-f{i + 1}-go", "strength": 0.4} for i in range(n - 1)]
    edges += [*_snap()["edges"], {"source": "src-f0-go", "relationship": "eats", "target": "src-f1-go"},
              {"source": "src-f0-go", "relationship": "related_to", "target": "src-f0-go"}, {"source": "src-f2-go", "strength": "x"}]
    return {**_snap(), "nodes": nodes, "edges": edges}


def test_a_pull_takes_the_same_from_the_writers_seed_as_from_the_snapshot(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # The snapshot's writer leaves its checked nodes and edges beside it; a SessionStart reads
    # those instead of checking 400 nodes again: every session, new or resumed, at any time,
    # gets exactly the ops the snapshot itself gives.
    write_snapshot(tmp_path, "/p", _big_snap())
    assert os.path.exists(snapshot_files.cache_file(tmp_path, "/p", "seed"))
    seed = snapshot.read_seed(tmp_path, "/p")
    assert seed == snapshot.seed_of(snapshot.read_snapshot(tmp_path, "/p"))  # type: ignore[arg-type]
    resumed = new_document("s", "/p", now=T0)
    resumed["nodes"]["src-f3-go"] = make_node("src/f3.go", "technical", "file", now=T0)
    for doc in (new_document("s", "/p", now=T0), resumed):
        for at in (T0, T0 + timedelta(days=40, seconds=7)):
            for bounds in ({}, {"max_nodes": 5, "max_edges": 2}):
                expected = snapshot.snapshot_ops(doc, snapshot.read_snapshot(tmp_path, "/p"), at, **bounds)  # type: ignore[arg-type]
                assert snapshot.seed_ops(doc, seed, at, **bounds) == expected  # type: ignore[arg-type]
    ops = snapshot.seed_ops(new_document("s", "/p", now=T0), seed, T0)  # type: ignore[arg-type]
    nodes = [op["value"] for op in ops if op["path"].startswith("/nodes/")]
    assert [n["last_activated"] for n in nodes[:2]] == ["2026-11-01T00:00:00Z", "2026-10-31T23:59:59Z"]
    assert nodes[0]["first_seen"] == "2026-11-01T00:00:00Z"  # no stamp of its own: the pull's
    assert "seq" not in nodes[0]["facts"] and nodes[0]["facts"]["edits"] == 0
    assert not any(v.startswith("9999") for n in nodes for v in (n["last_activated"], n["first_seen"]))


def test_a_seed_is_read_only_when_made_from_the_snapshot_in_place_and_owned_by_the_user(tmp_path) -> None:  # type: ignore[no-untyped-def]
    write_snapshot(tmp_path, "/p", _big_snap())
    cache = snapshot_files.cache_file(tmp_path, "/p", "seed")
    fresh = snapshot.seed_of(snapshot.read_snapshot(tmp_path, "/p"))  # type: ignore[arg-type]

    def forged() -> None:  # a seed that says something else, keyed to the snapshot in place
        key, made_from, project, (p, nodes, edges) = marshal.loads(Path(cache).read_bytes())
        Path(cache).write_bytes(marshal.dumps((key, made_from, project, (p, nodes[:1], []))))

    forged()
    assert len(snapshot.read_seed(tmp_path, "/p")[1]) == 1  # type: ignore[index]  # (it is what is read)
    os.chmod(cache, 0o666)  # writable by others: its nodes would go into every session
    assert snapshot.read_seed(tmp_path, "/p") == fresh
    os.chmod(cache, 0o600)
    snapshot_path(tmp_path, "/p").write_text(json.dumps({**_big_snap(5), "version": 1, "project": "/p"}), encoding="utf-8")  # rewritten by hand
    rewritten = snapshot.read_seed(tmp_path, "/p")  # from the snapshot, not the seed of the one before
    assert rewritten == snapshot.seed_of(snapshot.read_snapshot(tmp_path, "/p")) and len(rewritten[1]) == 9  # type: ignore[arg-type, index]
    Path(cache).write_bytes(b"garbage")
    assert snapshot.read_seed(tmp_path, "/p")[1][0]["id"] == "src-f0-go"  # type: ignore[index]
    os.unlink(snapshot_files.snapshot_file(tmp_path, "/p"))
    assert snapshot.read_seed(tmp_path, "/p") is None
    assert snapshot.read_seed(tmp_path, "/q") is None
