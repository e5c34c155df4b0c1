"""The clock every timestamp of a session comes from: the system's, or one pinned instant.

:func:`rolling_graph.core.config.load_settings` reads ``ROLLING_GRAPH_NOW`` once and puts the
clock in :attr:`Settings.clock <rolling_graph.core.config.Settings.clock>`; code that stamps a
time asks the settings it was given, never the environment. A replay pins the clock per
event with :meth:`Settings.at <rolling_graph.core.config.Settings.at>` (no ``os.environ``
change), and passes ``ROLLING_GRAPH_NOW`` on to the processes it starts. The system clock
is :func:`utcnow` (freezegun-friendly). Here too the timestamp helpers every module uses
(:func:`iso`, :func:`parse_iso`, :func:`now_iso`, :func:`seconds`). Stdlib only; the
``datetime`` classes are loaded only when a ``datetime`` is asked for (the hook's tool path
asks for strings), and then from their C module (:func:`classes`).
"""

from __future__ import annotations

import sys
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from datetime import datetime, timedelta
    from types import ModuleType


def classes() -> ModuleType:
    """Where the ``datetime`` classes come from: the ``datetime`` module when something has
    loaded it (a test's freezegun patches its attributes), else its C module ``_datetime``,
    which holds the very same classes. ``import datetime`` first runs the 2,600 lines of its
    pure-Python fallback and then replaces them with ``_datetime``'s: ~4 ms of a hook whose
    work is 40 (``python -S -c "import datetime"`` 18.8 ms, ``import _datetime`` 14.9, bare 13.9)."""
    module = sys.modules.get("datetime") or sys.modules.get("_datetime")
    if module is None:
        try:
            module = __import__("_datetime")
        except ImportError:  # pragma: no cover - an interpreter without the C module
            module = __import__("datetime")
    return module


def utcnow() -> datetime:
    """The system clock, timezone-aware (freezegun-friendly). Code that has settings asks
    ``settings.clock`` instead (:class:`Clock`), which a replay may pin."""
    dt = classes()
    return dt.datetime.now(dt.UTC)  # type: ignore[no-any-return]


def seconds(count: float) -> timedelta:
    """``timedelta(seconds=count)``, its class from :func:`classes`."""
    return classes().timedelta(seconds=count)  # type: ignore[no-any-return]


def now_iso() -> str:
    """:func:`utcnow` as an ISO string, without importing ``datetime`` (hook hot path)."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def iso(dt: datetime) -> str:
    """``dt`` in UTC as ``YYYY-MM-DDTHH:MM:SSZ`` (seconds, truncated). Formatted field by field:
    ``strftime`` after ``astimezone`` cost ~8 µs a stamp, and a new session stamps 400 nodes."""
    utc = classes().UTC
    if dt.tzinfo is not utc:
        dt = dt.astimezone(utc)
    return f"{dt.year:04d}-{dt.month:02d}-{dt.day:02d}T{dt.hour:02d}:{dt.minute:02d}:{dt.second:02d}Z"


def parse_iso(text: str | None) -> datetime | None:
    if not text:
        return None
    classes_ = classes()
    try:
        dt: datetime = classes_.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return dt if dt.tzinfo else dt.replace(tzinfo=classes_.UTC)


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
