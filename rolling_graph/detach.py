"""Start a fully detached background process (probe, reconcile, pull).

Claude Code waits for every process that holds the hook's stdout or stderr open, so the
child gets a new session, stdin from /dev/null and stdout/stderr appended to a log file,
and the hook returns without waiting for it. ``os.posix_spawn`` keeps this cheap: no
``subprocess`` import and no fork of the hook's memory on the user's critical path.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path


#: Background work (probes, reconciliation) yields the CPU to the user's session.
NICENESS = 10


def lower_priority() -> None:
    """Called first thing by detached entry points: never compete with the foreground."""
    try:  # noqa: SIM105 - contextlib costs an import in a process that counts milliseconds
        os.nice(NICENESS)
    except OSError:  # pragma: no cover - not permitted here
        pass


def spawn_detached(module: str, args: list[str], log_path: Path | str, env: dict[str, str] | None = None) -> int:
    """Run ``python -m module *args`` detached with this interpreter; return its pid."""
    log = os.fspath(log_path)
    os.makedirs(os.path.dirname(log) or ".", exist_ok=True)
    child_env = dict(os.environ if env is None else env)
    child_env.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    argv = [sys.executable, "-m", module, *args]
    if hasattr(os, "posix_spawn"):
        actions = [
            (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
            (os.POSIX_SPAWN_OPEN, 1, log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600),
            (os.POSIX_SPAWN_DUP2, 1, 2),
        ]
        return os.posix_spawn(sys.executable, argv, child_env, file_actions=actions, setsid=True)
    import subprocess  # pragma: no cover - platforms without posix_spawn

    with open(log, "ab") as fh:  # pragma: no cover
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=fh, stderr=fh, start_new_session=True, close_fds=True, env=child_env)
    return proc.pid  # pragma: no cover


# -- deferred starts -----------------------------------------------------------------------
#: Starts queued while ``defer`` is on: the hook process turns it on so that a new probe
#: never competes for the CPU with the hook's own output; it runs them after flushing.
_DEFERRED: list[tuple[str, list[str], str, dict[str, str]]] = []
defer = False


def spawn_later(module: str, args: list[str], log_path: str, env: dict[str, str]) -> None:
    """:func:`spawn_detached` now, or after the hook's output when deferring."""
    if defer:
        _DEFERRED.append((module, args, log_path, env))
        return
    spawn_detached(module, args, log_path, env)


def run_deferred() -> None:
    while _DEFERRED:
        spawn_detached(*_DEFERRED.pop(0))
