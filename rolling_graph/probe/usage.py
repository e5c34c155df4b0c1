"""Probe token usage and estimated cost: per session (in the sidecar) and per day (a file).

Per session: ``doc["counters"]["probe_tokens_in"]`` / ``["probe_tokens_out"]``, updated
by :func:`count_tokens` inside the runner's sidecar transaction.

Per day: ``$ROLLING_GRAPH_HOME/usage/<YYYY-MM-DD>.json`` (UTC day), updated by
:func:`record` under an ``fcntl`` lock with an atomic rename, because several probe
processes (one per session) may finish at once.

The daily cap holds across concurrent sessions because a model call is paid for before it
is made: :func:`reserve` takes the call's maximum cost (estimated tokens) out of the day's
allowance under the same lock, or refuses when it would cross the cap; :func:`record`
settles the reservation with what the call actually cost. Until settled, a reservation
counts as spent. One whose process died (a killed probe) stays spent: the next
:func:`reserve` or :func:`claim_killed` charges it to the day, its backend and its session
(``killed``), and the session's next probe adds it to the session's own counters.

Costs are **estimates**: tokens reported by the provider times the list prices in
:data:`PRICES_PER_MTOK` as of late 2026. They ignore discounts, batch pricing and cache
pricing, and a model missing from the table is shown with no cost rather than a guess.
Local models (Ollama) cost nothing here. Where the provider reports a cost itself (the
``claude`` CLI's ``total_cost_usd``), that figure is used instead.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rolling_graph.core.clock import iso, parse_iso, utcnow
from rolling_graph.core.config import Settings
from rolling_graph.core.detach import pid_alive
from rolling_graph.probe.base import ProbeResult
from rolling_graph.store.atomic import write_text_atomic

if TYPE_CHECKING:
    from rolling_graph.core.types import Counters, SessionDoc

#: USD per million tokens, (input, output). Matched by longest prefix of the model name.
PRICES_PER_MTOK: dict[str, tuple[float, float]] = {
    "claude-haiku-4-5": (1.0, 5.0),
    "claude-3-5-haiku": (0.8, 4.0),
    "claude-3-haiku": (0.25, 1.25),
    "claude-sonnet-4": (3.0, 15.0),
    "claude-3-7-sonnet": (3.0, 15.0),
    "claude-opus-4-1": (15.0, 75.0),
    "claude-opus-4-5": (5.0, 25.0),
    "claude-opus-4": (15.0, 75.0),
}
SESSIONS_PER_DAY_MAX = 500  # bounded per-day session table


def estimate_cost(model: str | None, tokens_in: int, tokens_out: int, backend: str | None = None) -> float | None:
    """Estimated USD for one call; ``0.0`` for local/offline, ``None`` when the model's price is unknown."""
    if backend in ("ollama", "offline") or (tokens_in == 0 and tokens_out == 0):
        return 0.0
    if not model:
        return None
    best = max((p for p in PRICES_PER_MTOK if model.startswith(p)), key=len, default=None)
    if best is None:
        return None
    price_in, price_out = PRICES_PER_MTOK[best]
    return round((tokens_in * price_in + tokens_out * price_out) / 1_000_000, 6)


def usage_dir(settings: Settings) -> Path:
    return settings.home / "usage"


def usage_path(settings: Settings, day: str) -> Path:
    return usage_dir(settings) / f"{day}.json"


def day_of(now: datetime | None = None) -> str:
    return iso(now or utcnow())[:10]


def empty_day(day: str) -> dict[str, Any]:
    return {
        "date": day,
        "probes": 0,
        "tokens_in": 0,
        "tokens_out": 0,
        "estimated_cost_usd": 0.0,
        "fallbacks": 0,
        "by_backend": {},
        "by_model": {},
        "sessions": {},
        "cost_note": "estimate: provider-reported tokens x list prices; unknown models uncounted",
    }


def read_day(settings: Settings, day: str | None = None) -> dict[str, Any]:
    """The day's usage (an empty record when there is none or it is unreadable)."""
    day = day or day_of(settings.clock.now())
    try:
        data = json.loads(usage_path(settings, day).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return empty_day(day)
    return data if isinstance(data, dict) else empty_day(day)


def daily_tokens(settings: Settings, day: str | None = None) -> int:
    """Tokens spent today, the calls in progress (their reservations) included."""
    return _day_total(read_day(settings, day))


def _day_total(data: dict[str, Any]) -> int:
    held = sum(int(r.get("tokens", 0) or 0) for r in (data.get("reservations") or {}).values() if isinstance(r, dict))
    return int(data.get("tokens_in", 0) or 0) + int(data.get("tokens_out", 0) or 0) + held


#: A reservation older than this is settled as spent even if its pid runs (reused by now):
#: no call lives this long (the backends' timeouts are far shorter).
RESERVATION_STALE_S = 3600.0
#: Most sessions whose killed calls wait for the session's next probe (bounded file).
KILLED_SESSIONS_MAX = 200


class CapReached(Exception):
    """:func:`reserve` refused: the call's maximum cost would cross the daily cap."""


def reserve(settings: Settings, session_id: str, backend: str, model: str | None, tokens: int, *, now: datetime | None = None) -> str:
    """Take ``tokens`` (a call's maximum cost) out of today's allowance before the call is
    made, under the day file's lock; returns the reservation's id for :func:`record`. Raises
    :class:`CapReached` (with the one-line reason) when the day's spend, the calls in
    progress included, plus ``tokens`` would cross ``daily_token_cap``: concurrent sessions
    can never overshoot it together."""
    import uuid

    now = now or settings.clock.now()
    day = day_of(now)
    path = usage_path(settings, day)
    cap = settings.probe.daily_token_cap
    with _locked(path):
        data = read_day(settings, day)
        _settle_dead(data, now)
        today = _day_total(data)
        if cap > 0 and today + tokens > cap:
            _atomic_write(path, data)  # dead reservations settled stay settled
            raise CapReached(
                f"cap reached: {today:,} probe tokens used or reserved today (cap {cap:,}); the next call may cost up to "
                f"{tokens:,}; using the offline probe"
            )
        rid = f"{day}:{uuid.uuid4().hex[:16]}"  # the day names the file that holds it
        data.setdefault("reservations", {})[rid] = {
            "pid": os.getpid(), "session": session_id, "backend": backend, "model": model, "tokens": int(tokens), "at": iso(now),
        }
        _atomic_write(path, data)
    return rid


def claim_killed(settings: Settings, session_id: str, *, now: datetime | None = None) -> int:
    """Tokens of this session's calls that died with their probe (killed mid-call), charged
    to the day already and now handed to the session's own counters once. Also settles
    every dead reservation of the day."""
    now = now or settings.clock.now()
    path = usage_path(settings, day_of(now))
    if not path.exists():
        return 0
    with _locked(path):
        data = read_day(settings, day_of(now))
        _settle_dead(data, now)
        killed = data.get("killed_unclaimed") or {}
        tokens = int(killed.pop(session_id, 0) or 0) if isinstance(killed, dict) else 0
        _atomic_write(path, data)
    return tokens


def _settle_dead(data: dict[str, Any], now: datetime) -> None:
    """Charge, in place, every reservation whose process is gone (or that is stale): its
    reserved tokens count as spent, since the call may have been billed in full."""
    held = data.get("reservations")
    if not isinstance(held, dict):
        return
    for rid, r in list(held.items()):
        if not isinstance(r, dict):
            del held[rid]
            continue
        at = parse_iso(str(r.get("at") or "")) if r.get("at") else None
        age = (now - at).total_seconds() if at is not None else RESERVATION_STALE_S
        pid = int(r.get("pid", 0) or 0)
        if pid == os.getpid() or (age < RESERVATION_STALE_S and pid > 0 and pid_alive(pid)):
            continue
        del held[rid]
        tokens, sid = int(r.get("tokens", 0) or 0), str(r.get("session") or "?")
        killed = ProbeResult(backend=str(r.get("backend") or "model"), rationale="", patch=[], model=r.get("model"),
                             input_tokens=tokens, output_tokens=0)
        apply_result(data, sid, killed)
        data["killed"] = int(data.get("killed", 0) or 0) + 1
        unclaimed = data.setdefault("killed_unclaimed", {})
        if sid in unclaimed or len(unclaimed) < KILLED_SESSIONS_MAX:
            unclaimed[sid] = int(unclaimed.get(sid, 0) or 0) + tokens


def session_tokens(doc: SessionDoc) -> int:
    counters = doc.get("counters") or {}
    return int(counters.get("probe_tokens_in", 0) or 0) + int(counters.get("probe_tokens_out", 0) or 0)


def remaining_tokens(settings: Settings, doc: SessionDoc) -> int | None:
    """Tokens left under the tighter of the two caps (``None``: no cap applies)."""
    left = [
        cap - used
        for cap, used in (
            (settings.probe.session_token_cap, session_tokens(doc)),
            (settings.probe.daily_token_cap, daily_tokens(settings)),
        )
        if cap > 0
    ]
    return max(0, min(left)) if left else None


def charge_failure(result: ProbeResult, exc: Any) -> ProbeResult:
    """Carry a failed model call's tokens (from :class:`ProbeFailed`) onto the fallback result."""
    result.extra["failed_model"] = getattr(exc, "model", None)
    result.extra["failed_backend"] = getattr(exc, "backend", None)
    result.extra["failed_tokens_in"] = int(getattr(exc, "input_tokens", 0) or 0)
    result.extra["failed_tokens_out"] = int(getattr(exc, "output_tokens", 0) or 0)
    cost = getattr(exc, "cost_usd", None)
    if isinstance(cost, int | float) and cost > 0:
        result.extra["failed_cost_usd"] = float(cost)
    return result


def _spent(result: ProbeResult) -> list[tuple[str, str | None, int, int, float | None]]:
    """(backend, model, tokens_in, tokens_out, reported cost) for every call behind a result."""
    calls = [(result.backend, result.model, int(result.input_tokens or 0), int(result.output_tokens or 0), result.cost_usd)]
    failed_in = int(result.extra.get("failed_tokens_in", 0) or 0)
    failed_out = int(result.extra.get("failed_tokens_out", 0) or 0)
    failed_cost = result.extra.get("failed_cost_usd")
    if failed_in or failed_out or failed_cost:
        backend = result.extra.get("failed_backend") or "model"
        calls.append((str(backend), result.extra.get("failed_model"), failed_in, failed_out, failed_cost))
    return calls


def count_tokens(counters: Counters, result: ProbeResult) -> None:
    """Add a result's tokens (including a failed call's) to a session's counters, in place."""
    for _backend, _model, t_in, t_out, _cost in _spent(result):
        counters["probe_tokens_in"] = int(counters.get("probe_tokens_in", 0) or 0) + t_in
        counters["probe_tokens_out"] = int(counters.get("probe_tokens_out", 0) or 0) + t_out


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_suffix(".lock"), "a+") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock.fileno(), fcntl.LOCK_UN)


def _atomic_write(path: Path, data: dict[str, Any]) -> None:
    write_text_atomic(path, json.dumps(data, indent=1, sort_keys=True))


def _bump(table: dict[str, Any], key: str, t_in: int, t_out: int, cost: float | None, probes: int) -> None:
    row = table.setdefault(key, {"probes": 0, "tokens_in": 0, "tokens_out": 0, "estimated_cost_usd": 0.0})
    row["probes"] += probes
    row["tokens_in"] += t_in
    row["tokens_out"] += t_out
    row["estimated_cost_usd"] = round(row.get("estimated_cost_usd", 0.0) + (cost or 0.0), 6)


def apply_result(data: dict[str, Any], session_id: str, result: ProbeResult) -> dict[str, Any]:
    """Pure: the day record ``data`` with one probe result added."""
    data["probes"] = int(data.get("probes", 0)) + 1
    if result.fallback_reason:
        data["fallbacks"] = int(data.get("fallbacks", 0)) + 1
    sessions = data.setdefault("sessions", {})
    for i, (backend, model, t_in, t_out, reported) in enumerate(_spent(result)):
        cost = round(float(reported), 6) if reported is not None else estimate_cost(model, t_in, t_out, backend)
        counted = 1 if i == 0 else 0
        data["tokens_in"] = int(data.get("tokens_in", 0)) + t_in
        data["tokens_out"] = int(data.get("tokens_out", 0)) + t_out
        data["estimated_cost_usd"] = round(float(data.get("estimated_cost_usd", 0.0)) + (cost or 0.0), 6)
        _bump(data.setdefault("by_backend", {}), backend, t_in, t_out, cost, counted)
        if i:  # a model call that failed before the answer: counted where it was spent
            row = data["by_backend"][backend]
            row["failed_calls"] = int(row.get("failed_calls", 0) or 0) + 1
        if model:
            _bump(data.setdefault("by_model", {}), model, t_in, t_out, cost, counted)
        if session_id in sessions or len(sessions) < SESSIONS_PER_DAY_MAX:
            _bump(sessions, session_id, t_in, t_out, cost, counted)
    return data


def record(
    settings: Settings, session_id: str, result: ProbeResult, *, now: datetime | None = None, reservation: str | None = None
) -> dict[str, Any]:
    """Add one probe result to today's usage file (locked, atomic), settling its
    ``reservation`` (:func:`reserve`) in the same write (a call is counted on the day it
    began); returns the new day record."""
    day = reservation.split(":", 1)[0] if reservation else day_of(now or settings.clock.now())
    path = usage_path(settings, day)
    with _locked(path):
        data = read_day(settings, day)
        if reservation is not None:
            (data.get("reservations") or {}).pop(reservation, None)
        data = apply_result(data, session_id, result)
        _atomic_write(path, data)
    return data


def release(settings: Settings, reservation: str, *, now: datetime | None = None) -> None:
    """Drop a reservation whose call cost nothing (it was never sent)."""
    day = reservation.split(":", 1)[0]
    path = usage_path(settings, day)
    with _locked(path):
        data = read_day(settings, day)
        if (data.get("reservations") or {}).pop(reservation, None) is not None:
            _atomic_write(path, data)
