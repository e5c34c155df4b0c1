"""Ranking the hot graph's names for the restore block: what a coding session needs back.

Four legs, each a plain ordering of the candidates, fused by weighted reciprocal rank
fusion (``score = Σ weight_leg / (k + rank_leg)``):

* **role** — what was done to it, and by whom: an edited or written file over one only
  read, a test or build command with an outcome, an open error; anything the user named
  over what only a tool touched;
* **recency** — ``facts.seq`` (the session's event counter at the last touch), then
  ``last_activated``;
* **frequency** — activations plus the node's fact counts, an edit counting more than a
  read, and the events that named it;
* **weight** — the node's weight (the probe's and decay's judgement).

Why fusion: a count, an event number and a weight are not comparable, their ranks are,
and a name strong on several legs beats one extreme on a single leg. Ties share a rank
(competition ranking: ``1, 2, 2, 4``), except on the recency leg, where tied names share
the positions they span (fractional ranking: ``1, 2.5, 2.5, 4``): the 60 names one Write of
a new file touches are not each the most recent name, and one touched alone later is not
one of 60. The final order breaks ties by id, so the ranking is deterministic, and
monotonic: raising one of a node's signals, all else equal, never moves it down.

Pure functions over nodes as loaded (:func:`rolling_graph.core.normalize.normalize_graph` has
made them match :class:`rolling_graph.core.types.Node`); nothing here reads a file.
"""

from __future__ import annotations

from rolling_graph.core.config import _Strategy

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from typing import Any

    from rolling_graph.core.types import FactIntKey, Node, NodeFacts


class RankSettings(_Strategy):
    """Weights of the fused legs and of the facts inside them."""

    #: RRF's ``k``: larger flattens the difference between adjacent ranks.
    rrf_k = 20.0
    role_weight = 1.0
    recency_weight = 1.0
    frequency_weight = 1.0
    weight_weight = 0.5
    #: Frequency leg: what one edit, write, read or run counts (an activation counts 1).
    edit_count = 3.0
    write_count = 3.0
    read_count = 1.0
    run_count = 1.0
    #: An event whose input named it (``facts.mentions``): a truer count of use than
    #: activations, which a probe batch adds at most once.
    mention_count = 3.0
    #: Role leg: added to the kind's base when the node was changed, has an outcome, is
    #: an open problem, or was named by the user.
    changed_bonus = 2.0
    outcome_bonus = 1.0
    open_bonus = 1.0
    user_bonus = 1.5
    #: A call into a library (:meth:`rolling_graph.render.view.RestoreView.external`): its
    #: fused score is multiplied by this, so the project's own names come first.
    external_weight = 1.0


#: Role leg: what a kind is worth before its facts (decisions and tasks have their own
#: sections in the block; among names, code and files matter most).
ROLE_BASE: dict[str, float] = {
    "correction": 3.5,
    "decision": 3.0,
    "preference": 2.5,
    "file": 1.5,
    "symbol": 1.5,
    "command": 1.0,
    "error": 1.0,
    "commit": 1.0,
    "entity": 1.0,
    "concept": 0.5,
    "summary": 0.0,
}

#: Named presets: ``coding`` (the default), ``recent`` (a session that jumps around),
#: ``compact`` (right after a compaction: the work goes on with what the session touched
#: last, so the last touch counts twice what use does, and neither what was done to a name
#: nor its weight counts; see below) and ``startup`` (a new session's graph is the project's resume snapshot, pulled in its
#: order a second apart: recency alone keeps the warm graph's ranking, which already fused
#: weight, recency, cross-session frequency and uses).
PRESETS: dict[str, RankSettings] = {
    "coding": RankSettings(),
    "recent": RankSettings(recency_weight=2.0, frequency_weight=0.5),
    "compact": RankSettings(recency_weight=2.0, frequency_weight=1.0, role_weight=0.0, weight_weight=0.0, external_weight=0.85),
    "startup": RankSettings(role_weight=0.0, frequency_weight=0.0, weight_weight=0.0, external_weight=0.85),
}
#: Why ``compact`` weighs the last touch twice what use counts, and neither what was done to
#: a name nor its weight: chosen over the 34 compactions of ../shared/corpus pooled, at 800 and
#: 400 tokens (``bench/eval_corpus.py``), where the work after a compaction goes on with what
#: was touched last; the figures are in docs/measurements.md. A library call ranks lower
#: (``external_weight``) although the pool pays a little for it: the project's own names
#: come first. The same holds for a new session's block (``startup``): over the entire-cli
#: chain it costs 0.003 / 0.006 of the startup figure at 800 / 400 tokens
#: (docs/measurements.md, "startup").
DEFAULT = PRESETS["coding"]


def facts_of(node: Node) -> NodeFacts:
    return node.get("facts") or {}


def count(facts: NodeFacts, key: FactIntKey) -> int:
    """A count fact, never below 0."""
    value = facts.get(key, 0)
    return value if value > 0 else 0


def role(node: Node, settings: RankSettings = DEFAULT) -> float:
    """What was done to a node and who brought it in, as one number (larger = better)."""
    score = ROLE_BASE.get(node["kind"], 0.5)
    facts = node.get("facts")
    if facts:
        if count(facts, "edits") or count(facts, "writes"):
            score += settings.changed_bonus
        if facts.get("outcome") in ("pass", "fail"):
            score += settings.outcome_bonus
        if facts.get("state") == "open":
            score += settings.open_bonus
        if facts.get("by") == "user":
            score += settings.user_bonus
    return score


def is_removed(facts: NodeFacts) -> bool:
    """Did an edit take the name out of the code at its last use (``removed`` at or after
    ``seq``)? A later use (a later ``seq``) makes it current again."""
    removed = facts.get("removed")
    return removed is not None and removed >= facts.get("seq", -1)


def recency_key(node: Node) -> tuple[int, str]:
    """``(seq, last_activated)``: the event counter first, the clock for nodes without one."""
    return (facts_of(node).get("seq", -1), node["last_activated"])


def frequency(node: Node, settings: RankSettings = DEFAULT) -> float:
    facts = facts_of(node)
    return (
        node["activations"]
        + settings.edit_count * count(facts, "edits")
        + settings.write_count * count(facts, "writes")
        + settings.read_count * count(facts, "reads")
        + settings.run_count * count(facts, "runs")
        + settings.mention_count * count(facts, "mentions")
    )


def competition_ranks(keys: Mapping[str, Any]) -> dict[str, int]:
    """1 + how many ids have a strictly larger key (ties share a rank)."""
    ranks: dict[str, int] = {}
    previous: Any = None
    rank = 0
    # Ids sorted by their keys' values through the mapping's own lookup: no (id, key) pair per id
    # (the SessionStart hook ranks a 2,000-node graph four times).
    for position, nid in enumerate(sorted(keys, key=keys.__getitem__, reverse=True), 1):
        key = keys[nid]
        if position == 1 or key != previous:
            rank, previous = position, key
        ranks[nid] = rank
    return ranks


def fractional_ranks(keys: Mapping[str, Any]) -> dict[str, float]:
    """The mean of the positions each tied group spans (``{a: 3, b: 5, c: 3}`` → ``b: 1``,
    ``a`` and ``c``: 2.5): a large tie weighs less than a small one at the same place. A
    group of ``n`` at competition rank ``r`` spans ``r … r + n - 1``."""
    ranks = competition_ranks(keys)
    tied: dict[int, int] = {}
    for rank in ranks.values():
        tied[rank] = tied.get(rank, 0) + 1
    return {nid: rank + (tied[rank] - 1) / 2 for nid, rank in ranks.items()}


def scores(nodes: Mapping[str, Node], ids: Iterable[str] | None = None, settings: RankSettings = DEFAULT) -> dict[str, float]:
    """The fused score of each id (of ``ids``, default every node)."""
    chosen = [i for i in (nodes if ids is None else ids) if i in nodes]
    roles: dict[str, float] = {}
    recent: dict[str, tuple[int, str]] = {}
    often: dict[str, float] = {}
    heavy: dict[str, float] = {}
    for nid in chosen:  # one pass (the SessionStart hook ranks every node of the graph)
        node = nodes[nid]
        if node.get("facts"):
            roles[nid] = role(node, settings)
            recent[nid] = recency_key(node)
            often[nid] = frequency(node, settings)
        else:
            roles[nid] = ROLE_BASE.get(node["kind"], 0.5)
            recent[nid] = (-1, node["last_activated"])
            often[nid] = node["activations"]
        heavy[nid] = node["weight"]
    fused = dict.fromkeys(chosen, 0.0)
    k = settings.rrf_k
    legs: tuple[tuple[float, Mapping[str, Any]], ...] = (
        (settings.role_weight, roles), (settings.recency_weight, recent), (settings.frequency_weight, often), (settings.weight_weight, heavy))
    for weight, keys in legs:
        if weight <= 0:
            continue
        ranked: Mapping[str, float] = fractional_ranks(keys) if keys is recent else competition_ranks(keys)
        for nid, leg_rank in ranked.items():
            fused[nid] += weight / (k + leg_rank)
    return fused


def rank(nodes: Mapping[str, Node], ids: Iterable[str] | None = None, settings: RankSettings = DEFAULT) -> list[str]:
    """Ids best first: fused score, then id (deterministic)."""
    return best_first(scores(nodes, ids, settings))


def best_first(fused: Mapping[str, float]) -> list[str]:
    """The ids of :func:`scores`, best first, ties by id: sorted by id, then by score (a
    stable sort, reversed, keeps the ids of a tie in order)."""
    ids = sorted(fused)
    ids.sort(key=fused.__getitem__, reverse=True)
    return ids
