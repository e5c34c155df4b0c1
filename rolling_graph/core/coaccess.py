"""Co-access: files touched together in a session, weighted across sessions (pure functions).

Each session (or, for a cold start, each git commit) is the list of files it touched, in the
order it first touched them. For two files ``a`` and ``b``:

* **weight** = sessions that touched both ÷ sessions that touched either, each session
  counted with its *say* (1 for a plain count; the warm graph discounts older sessions by
  ``0.5 ** (age / half_life)``, the same recency decay its other edges get), so a pair the
  recent sessions no longer touch together fades while its history still counts;
* **a_first** = the share (by say) of the sessions that touched both in which ``a`` came
  first: near 1, ``a`` leads to ``b``; near 0.5, no order. A session whose order means
  nothing (a git commit lists its files by name) counts for the weight only; a pair with no
  ordered session has ``a_first`` 0.5.

A pair is keyed by its two paths in sorted order (:func:`pair_key`). A session that touched
more than ``max_files`` files counts its first ``max_files`` only (a mass rename or a
formatting commit says little about which files go together, and the pairs grow as the
square). Everything here takes plain values and returns plain values; the warm graph's
storage is :mod:`rolling_graph.warm.coaccess`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import NamedTuple

from rolling_graph.core.decay import halving

#: Files of one session that count (the first touched first).
MAX_FILES = 40


class Pair(NamedTuple):
    """Two files' co-access across sessions (``a`` < ``b``)."""

    weight: float  # both ÷ either, each session counted with its say: 0..1
    a_first: float  # share of the sessions touching both in which a came first: 0..1
    both: int  # sessions that touched both
    either: int  # sessions that touched either


def pair_key(x: str, y: str) -> tuple[str, str]:
    return (x, y) if x < y else (y, x)


def first_touches(files: Iterable[str], max_files: int = MAX_FILES) -> list[str]:
    """``files`` in first-touch order, each once, at most ``max_files``."""
    return list(dict.fromkeys(f for f in files if f))[:max_files]


def recency_say(age_hours: float, half_life_hours: float) -> float:
    """A session's say after ``age_hours``: ``0.5 ** (age / half_life)`` (1 when no decay)."""
    return halving(age_hours, half_life_hours) if half_life_hours > 0 else 1.0


def co_access(sessions: Iterable[tuple[Sequence[str], float, bool]], max_files: int = MAX_FILES) -> dict[tuple[str, str], Pair]:
    """Every pair of files touched together in some session, from ``(files, say, ordered)``
    per session (``files`` in first-touch order when ``ordered``; a ``say`` of 0 or less
    counts nothing)."""
    touched: dict[str, float] = {}
    touched_n: dict[str, int] = {}
    both: dict[tuple[str, str], float] = {}
    both_n: dict[tuple[str, str], int] = {}
    first: dict[tuple[str, str], float] = {}
    ordered_say: dict[tuple[str, str], float] = {}
    for files, say, ordered in sessions:
        if say <= 0:
            continue
        order = first_touches(files, max_files)
        for f in order:
            touched[f] = touched.get(f, 0.0) + say
            touched_n[f] = touched_n.get(f, 0) + 1
        for i, x in enumerate(order):
            for y in order[i + 1 :]:
                key = pair_key(x, y)
                both[key] = both.get(key, 0.0) + say
                both_n[key] = both_n.get(key, 0) + 1
                if ordered:
                    ordered_say[key] = ordered_say.get(key, 0.0) + say
                    if key[0] == x:  # x came first
                        first[key] = first.get(key, 0.0) + say
    out: dict[tuple[str, str], Pair] = {}
    for key, shared in both.items():
        a, b = key
        either = touched[a] + touched[b] - shared
        weight = min(1.0, shared / either) if either > 0 else 0.0
        told = ordered_say.get(key, 0.0)
        a_first = min(1.0, first.get(key, 0.0) / told) if told > 0 else 0.5
        out[key] = Pair(round(weight, 4), round(a_first, 4), both_n[key], touched_n[a] + touched_n[b] - both_n[key])
    return out


def partners(pairs: dict[tuple[str, str], Pair], limit: int, min_both: int = 1) -> dict[str, list[tuple[str, float, float]]]:
    """Each file's strongest partners: ``file → [(other, weight, share in which file came
    first), ...]``, heaviest first (ties by name), at most ``limit``, each pair seen together
    in at least ``min_both`` sessions."""
    found: dict[str, list[tuple[str, float, float]]] = {}
    for (a, b), pair in pairs.items():
        if pair.both < min_both:
            continue
        found.setdefault(a, []).append((b, pair.weight, pair.a_first))
        found.setdefault(b, []).append((a, pair.weight, round(1.0 - pair.a_first, 4)))
    return {f: sorted(rows, key=lambda r: (-r[1], r[0]))[:limit] for f, rows in found.items()}


def kept_pairs(pairs: dict[tuple[str, str], Pair], per_file: int) -> dict[tuple[str, str], Pair]:
    """The pairs among some file's ``per_file`` strongest (what the warm graph stores)."""
    keep: set[tuple[str, str]] = set()
    for f, rows in partners(pairs, per_file).items():
        keep.update(pair_key(f, other) for other, _, _ in rows)
    return {k: v for k, v in pairs.items() if k in keep}
