"""The clock every timestamp of a session comes from: the system's, or one pinned instant.

:func:`rolling_graph.core.config.load_settings` reads ``ROLLING_GRAPH_NOW`` once and puts the
clock in :attr:`Settings.clock <rolling_graph.core.config.Settings.clock>`; code that stamps a
time asks the settings it was given, never the environment. A replay pins the clock per
event with :meth:`Settings.at <rolling_graph.core.config.Settings.at>` (no ``os.environ``
change), and passes ``ROLLING_GRAPH_NOW`` on to the processes it starts. The system clock
is :func:`utcnow` (freezegun-friendly). Here too the timestamp helpers every module uses
(:func:`iso`, :func:`parse_iso`, :func:`now_iso`). Stdlib only; ``datetime`` is imported
only when a ``datetime`` is asked for (the hook's tool path asks for strings).
"""

from __future__ import annotations

import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from datetime import datetime


def utcnow() -> datetime:
    """The system clock, timezone-aware (freezegun-friendly). Code that has settings asks
    ``settings.clock`` instead (:class:`Clock`), which a replay may pin."""
    from datetime import UTC, datetime

    return datetime.now(UTC)


def now_iso() -> str:
    """:func:`utcnow` as an ISO string, without importing ``datetime`` (hook hot path)."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def iso(dt: datetime) -> str:
    """``dt`` in UTC as ``YYYY-MM-DDTHH:MM:SSZ`` (seconds, truncated). Formatted field by field:
    ``strftime`` after ``astimezone`` cost ~8 µs a stamp, and a new session stamps 400 nodes."""
    from datetime import UTC

    if dt.tzinfo is not UTC:
        dt = dt.astimezone(UTC)
    return f"{dt.year:04d}-{dt.month:02d}-{dt.day:02d}T{dt.hour:02d}:{dt.minute:02d}:{dt.second:02d}Z"


def parse_iso(text: str | None) -> datetime | None:
    if not text:
        return None
    from datetime import UTC, datetime

    try:
        dt = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return dt if dt.tzinfo else dt.replace(tzinfo=UTC)


class Clock:
    """``now()`` as a ``datetime``, ``now_iso()`` as ``YYYY-MM-DDTHH:MM:SSZ``."""

    __slots__ = ("pinned",)

    def __init__(self, pinned: datetime | None = None) -> None:
        #: The instant this clock always answers, or None for the system clock.
        self.pinned = pinned

    @classmethod
    def at(cls, text: str) -> Clock:
        """A clock pinned at an ISO 8601 instant; ``ValueError`` if ``text`` is not one."""
        parsed = parse_iso(text)
        if parsed is None:
            raise ValueError(f"{text!r} is not an ISO 8601 time (e.g. 2026-01-01T12:00:00Z)")
        return cls(parsed)

    def now(self) -> datetime:
        if self.pinned is not None:
            return self.pinned
        return utcnow()

    def now_iso(self) -> str:
        if self.pinned is not None:
            return iso(self.pinned)
        return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())

    def __repr__(self) -> str:
        return f"Clock(pinned={self.now_iso()!r})" if self.pinned is not None else "Clock(system)"


#: The system clock (what settings built without ``ROLLING_GRAPH_NOW`` carry).
SYSTEM = Clock()
