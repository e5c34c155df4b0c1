"""Regular expressions compiled on first use.

The hook process starts anew for every event, and compiling a few dozen patterns costs
milliseconds that most events never need (a tool result needs the path pattern, not the
decision and correction grammar). ``lazy(pattern)`` behaves like ``re.compile(pattern)``
but compiles when first used.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re
    from typing import Any

#: ``re`` flag values, usable without importing ``re`` (importing it costs milliseconds).
IGNORECASE = 2


class LazyPattern:
    __slots__ = ("_pattern", "_flags", "_compiled")

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self._pattern = pattern
        self._flags = flags
        self._compiled: re.Pattern[str] | None = None

    def compiled(self) -> re.Pattern[str]:
        if self._compiled is None:
            import re

            self._compiled = re.compile(self._pattern, self._flags)
        return self._compiled

    def __getattr__(self, name: str) -> Any:
        return getattr(self.compiled(), name)


def lazy(pattern: str, flags: int = 0) -> LazyPattern:
    return LazyPattern(pattern, flags)
