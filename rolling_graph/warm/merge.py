"""Merge logic (the reconciliation math of docs/architecture.md, "Merge"), as pure functions.

A warm node's weight is a *fold* over the per-session contributions that reconciliations
recorded (one per session: that session's latest view of the node), plus an optional seed
weight from flat memory. Re-reconciling a session replaces its contribution, so running
reconciliation twice, or pre-compact then session-end, never counts a session twice.

Choices (where the design left two open):

* **Existing node: recency-weighted average, not higher-of-two.** Contributions are folded
  oldest first; each step averages the running weight with the newer session's weight, the
  older side discounted by ``0.5 ** (hours_between / half_life)``. Higher-of-two only ever
  ratchets up, so a decision a later session weakened (or superseded) would stay at its
  peak forever; the average lets the newest view dominate while history still counts.
* **New node: weight penalty.** The first contribution counts ``weight * (1 - penalty)``:
  it has not proven itself across sessions yet.
* **Cross-session frequency boost.** Each session beyond the first moves the weight a
  fraction ``boost`` of the way to 1: ``1 - (1 - w) * (1 - boost) ** (sessions - 1)``.
* **Anchors keep their floor** (nodes seeded from flat memory never drop below it).
* **Edges** merge by ``(source, relationship, target)`` with the same recency average of
  strengths; ``supersedes`` edges take the strongest view and are never removed, so a
  decision's history survives every merge.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from rolling_graph.core.model import CONFIDENCE


@dataclass(frozen=True)
class MergePolicy:
    #: First appearance in the warm graph counts ``weight * (1 - new_node_penalty)``.
    new_node_penalty: float = 0.15
    #: Half-life (hours) of the older side's say in the recency-weighted average.
    recency_half_life_hours: float = 72.0
    #: Each session beyond the first moves the weight this fraction of the way to 1.
    frequency_boost: float = 0.08
    #: Relationships whose strength takes the strongest view (never averaged down).
    keep_strongest: tuple[str, ...] = ("supersedes",)


DEFAULT_POLICY = MergePolicy()


@dataclass(frozen=True)
class Contribution:
    """One session's view of a node (or an edge's strength)."""

    session_id: str
    weight: float
    last_activated: datetime


def clamp01(value: float) -> float:
    if math.isnan(value):
        return 0.0
    return min(1.0, max(0.0, float(value)))


def recency_average(
    old_weight: float, old_time: datetime, new_weight: float, new_time: datetime, policy: MergePolicy = DEFAULT_POLICY
) -> float:
    """Average two views, the older one discounted by its age relative to the newer."""
    if new_time < old_time:
        old_weight, old_time, new_weight, new_time = new_weight, new_time, old_weight, old_time
    hours = (new_time - old_time).total_seconds() / 3600.0
    old_say = 0.5 ** (hours / policy.recency_half_life_hours) if policy.recency_half_life_hours > 0 else 0.0
    return clamp01((old_say * clamp01(old_weight) + clamp01(new_weight)) / (old_say + 1.0))


def new_node_weight(weight: float, policy: MergePolicy = DEFAULT_POLICY) -> float:
    return clamp01(clamp01(weight) * (1.0 - policy.new_node_penalty))


def frequency_boosted(weight: float, sessions: int, policy: MergePolicy = DEFAULT_POLICY) -> float:
    extra = max(0, sessions - 1)
    return clamp01(1.0 - (1.0 - clamp01(weight)) * (1.0 - policy.frequency_boost) ** extra)


def _ordered(contributions: Iterable[Contribution]) -> list[Contribution]:
    return sorted(contributions, key=lambda c: (c.last_activated, c.session_id, c.weight))


def upsert_contribution(contributions: Sequence[Contribution], new: Contribution) -> list[Contribution]:
    """Replace the session's earlier contribution (if any) with ``new``."""
    return [c for c in contributions if c.session_id != new.session_id] + [new]


def node_weight(
    contributions: Sequence[Contribution],
    *,
    seed_weight: float | None = None,
    seed_time: datetime | None = None,
    anchor: bool = False,
    floor: float = 0.0,
    policy: MergePolicy = DEFAULT_POLICY,
) -> float:
    """The warm weight of a node from all its sessions' contributions (order-independent).

    A seeded node (flat memory, human-approved) starts from its seed weight without the
    new-node penalty; otherwise the first session's weight is penalised.
    """
    ordered = _ordered(contributions)
    weight: float | None = None
    at: datetime | None = None
    if seed_weight is not None:
        weight, at = clamp01(seed_weight), seed_time
    for contribution in ordered:
        if weight is None or at is None:
            weight = new_node_weight(contribution.weight, policy)
        else:
            weight = recency_average(weight, at, contribution.weight, contribution.last_activated, policy)
        at = contribution.last_activated if at is None else max(at, contribution.last_activated)
    if weight is None:
        weight = 0.0
    weight = frequency_boosted(weight, len({c.session_id for c in ordered}), policy)
    if anchor:
        weight = max(weight, clamp01(floor))
    return clamp01(weight)


def edge_strength(
    relationship: str, contributions: Sequence[Contribution], policy: MergePolicy = DEFAULT_POLICY
) -> float:
    """Merged strength of one ``(source, relationship, target)`` edge."""
    if not contributions:
        return 0.0
    if relationship in policy.keep_strongest:
        return clamp01(max(c.weight for c in contributions))
    ordered = _ordered(contributions)
    strength, at = clamp01(ordered[0].weight), ordered[0].last_activated
    for contribution in ordered[1:]:
        strength = recency_average(strength, at, contribution.weight, contribution.last_activated, policy)
        at = max(at, contribution.last_activated)
    return clamp01(strength)


def merge_confidence(current: str | None, incoming: str | None) -> str:
    """Typed confidence: the stronger kind wins (``correction`` outranks everything)."""
    rank = {name: i for i, name in enumerate(CONFIDENCE)}
    options = [c for c in (current, incoming) if c in rank]
    return max(options, key=lambda c: rank[c]) if options else "inferred"
