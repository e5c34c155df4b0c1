"""Resume and pull ranking: reciprocal rank fusion (RRF) of independent legs.

Each leg ranks candidates by one signal — weight, recency ``exp(-age/half_life)``,
cross-session frequency, uses (activations summed over sessions; resume only), opening
(resume only), hops from the last focus and (for prompt pulls) embedding similarity — and
RRF sums ``1 / (k + rank)`` over the legs a candidate appears in. RRF needs no score
calibration between legs, which is why it suits signals this different.

*Opening* is a node's best place, over the sessions that found it themselves, in the order
its session first touched its names (:func:`openings`). A session starts by reading its way
into the project — the entry points, the module it will change, its tests — and the next
session of the project starts the same way, so the names sessions open with are the ones a
new session's first events use. Every other leg ranks by how much or how lately a name was
used, which favours what the last session ended on.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from rolling_graph.render.rank import competition_ranks


@dataclass(frozen=True)
class RankSettings:
    k: int = 60
    half_life_hours: float = 72.0
    max_hops: int = 3
    #: Rank by uses too (how often sessions touched the node), where candidates carry them.
    uses_leg: bool = True
    #: Rank by opening too (the names sessions touched first), where candidates carry it.
    opening_leg: bool = True
    #: How much each leg counts in the fusion (a leg not named counts 1).
    leg_weights: tuple[tuple[str, float], ...] = ()


#: A new session's names: uses (how often sessions touched a name) count most — on the 119
#: later sessions of ../shared/corpus/entire-cli the most frequent earlier names beat every
#: other ordering (bench/eval_chain.py; docs/measurements.md).
RESUME = RankSettings(leg_weights=(("uses", 6.0), ("opening", 2.0), ("weight", 0.5)))
PULL = RankSettings(half_life_hours=168.0, max_hops=2, uses_leg=False, opening_leg=False)


@dataclass(frozen=True)
class Candidate:
    id: str
    weight: float
    last_activated: datetime
    session_count: int = 1
    hops: int | None = None  # from the focus; None when not connected within max_hops
    similarity: float | None = None  # cosine similarity to the prompt, same model only
    activations: int | None = None  # uses over all sessions; None when not known
    opening: int | None = None  # best place in a session's discovery order; None when not known


def openings(first_seen: Mapping[str, datetime]) -> dict[str, int]:
    """Each node's place in its session's discovery order, by when the session first saw it:
    1 for the earliest; nodes first seen at one moment (one event) share a place (1, 1, 3)."""
    return competition_ranks({nid: -seen.timestamp() for nid, seen in first_seen.items()})


def recency(last_activated: datetime, now: datetime, half_life_hours: float) -> float:
    age_h = max(0.0, (now - last_activated).total_seconds() / 3600.0)
    return math.exp(-age_h / half_life_hours) if half_life_hours > 0 else 0.0


def hops_from(focus: Iterable[str], edges: Iterable[tuple[str, str]], max_hops: int) -> dict[str, int]:
    """Undirected breadth-first hop counts from the focus nodes, up to ``max_hops``."""
    adjacent: dict[str, set[str]] = {}
    for source, target in edges:
        adjacent.setdefault(source, set()).add(target)
        adjacent.setdefault(target, set()).add(source)
    dist: dict[str, int] = {}
    queue: deque[str] = deque()
    for node in focus:
        if node not in dist:
            dist[node] = 0
            queue.append(node)
    while queue:
        node = queue.popleft()
        if dist[node] >= max_hops:
            continue
        for other in sorted(adjacent.get(node, ())):
            if other not in dist:
                dist[other] = dist[node] + 1
                queue.append(other)
    return dist


def _competition(items: Sequence[Candidate], key: Callable[[Candidate], float]) -> list[tuple[str, int]]:
    """``(id, rank)`` best first, smallest ``key`` best; equal keys share a rank (1, 1, 3),
    so ids never break ties (:func:`rolling_graph.render.rank.competition_ranks`)."""
    ranks = competition_ranks({c.id: -key(c) for c in items})
    return sorted(ranks.items(), key=lambda pair: (pair[1], pair[0]))


def legs(candidates: Sequence[Candidate], now: datetime, settings: RankSettings = RESUME) -> dict[str, list[tuple[str, int]]]:
    """One ranking per signal, as ``(id, rank)`` pairs; tied signals share a rank."""
    out = {
        "weight": _competition(candidates, lambda c: -round(c.weight, 6)),
        "recency": _competition(candidates, lambda c: -round(recency(c.last_activated, now, settings.half_life_hours), 9)),
        "frequency": _competition(candidates, lambda c: -float(c.session_count)),
        "hops": _competition(
            [c for c in candidates if c.hops is not None and c.hops <= settings.max_hops], lambda c: float(c.hops or 0)
        ),
    }
    used = [c for c in candidates if c.activations is not None]
    if settings.uses_leg and used:
        out["uses"] = _competition(used, lambda c: -float(c.activations or 0))
    opened = [c for c in candidates if c.opening is not None]
    if settings.opening_leg and opened:
        out["opening"] = _competition(opened, lambda c: float(c.opening or 0))
    similar = [c for c in candidates if c.similarity is not None]
    if similar:
        out["similarity"] = _competition(similar, lambda c: -round(c.similarity or 0.0, 6))
    return out


def rank(candidates: Sequence[Candidate], now: datetime, settings: RankSettings = RESUME) -> list[str]:
    """Candidate ids, best first (final ties broken by id for determinism)."""
    scores: dict[str, float] = {}
    weights = dict(settings.leg_weights)
    for leg, ranking in legs(candidates, now, settings).items():
        weight = weights.get(leg, 1.0)
        for cid, position in ranking:
            scores[cid] = scores.get(cid, 0.0) + weight / (settings.k + position)
    return sorted((c.id for c in candidates), key=lambda cid: (-scores.get(cid, 0.0), cid))
