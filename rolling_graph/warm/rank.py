"""Resume and pull ranking: reciprocal rank fusion (RRF) of independent legs.

Each leg ranks candidates by one signal — weight, recency ``exp(-age/half_life)``,
cross-session frequency, uses (activations summed over sessions; resume only), recent uses
(resume only), opening (where switched on), hops from the last focus and (for prompt pulls)
embedding similarity — and RRF sums ``1 / (k + rank)`` over the legs a candidate appears
in. RRF needs no score calibration between legs, which is why it suits signals this different.

*Recent uses* are a node's uses in each session, each session's halved for every
``uses_half_life_sessions`` of the project's sessions active after it
(:func:`rolling_graph.warm.resume.recent_uses`): a new session goes on with what the last
few sessions kept using, and comes back to what the project always uses (the uses leg).

*Opening* is a node's best place, over the sessions that found it themselves, in the order
its session first touched its names (:func:`openings`): the names a session reads its way in
with. It is off in :data:`RESUME` since recent uses rank a new session's names better.
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
    #: Recent uses (:func:`rolling_graph.warm.resume.recent_uses`): a session's uses count
    #: half as much this many of the project's sessions later; 0 leaves the leg out.
    uses_half_life_sessions: float = 0.0


#: A new session's names: what the project's last sessions kept using counts most, then
#: uses over all its sessions — a new session goes on with what the last two or three used,
#: and comes back to what the project always uses. On the 119 later sessions of
#: ../shared/corpus/entire-cli, recent uses (half-life 2 sessions) over uses took the startup
#: block from 0.336 to 0.367 of the names a session's first 60 events use at 800 tokens (0.209
#: to 0.229 at 400), and the opening leg (the names sessions open with) no longer added
#: anything once they did (bench/eval_chain.py; docs/measurements.md, "startup"). Cross-session
#: frequency (how many sessions used a name) at ×8: a name many sessions came back to comes
#: before one the last session used a lot once, 0.362 -> 0.370 at 800 and 0.227 -> 0.229 at
#: 400 (×6 to ×16 all within 0.002 of it; bench/eval_startup_offline.py --legs).
RESUME = RankSettings(leg_weights=(("recent_uses", 12.0), ("frequency", 8.0), ("uses", 6.0), ("weight", 0.5)),
                      uses_half_life_sessions=2.0, opening_leg=False)
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
    recent_uses: float | None = None  # uses, each session's halved per later sessions; None when not known
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
    lately = [c for c in candidates if c.recent_uses is not None]
    if settings.uses_half_life_sessions > 0 and lately:
        out["recent_uses"] = _competition(lately, lambda c: -round(c.recent_uses or 0.0, 6))
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
