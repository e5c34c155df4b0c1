"""Start a fully detached background process (probe, reconcile, pull).

Claude Code waits for every process that holds the hook's stdout or stderr open, so the
child gets a new session, stdin from /dev/null and stdout/stderr appended to a log file,
and the hook returns without waiting for it. ``os.posix_spawn`` keeps this cheap: no
``subprocess`` import and no fork of the hook's memory on the user's critical path.

A command is ``python -m MODULE`` (:func:`python_module`, for the hot graph's own entry
points) or the bare name of one of this package's installed commands (the warm graph's
worker, see :mod:`rolling_graph.warm.hook_side`), looked up when it is started.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path


#: Background work (probes, reconciliation) yields the CPU to the user's session.
NICENESS = 10
#: ``signal.SIGTERM``: 15 wherever ``posix_spawn`` is (POSIX fixes it, ``kill -15``). Importing
#: :mod:`signal` builds its enums, a millisecond of the hook that starts a probe.
SIGTERM = 15


def lower_priority() -> None:
    """Run at :data:`NICENESS` (never higher): the hook before it starts detached work, which
    inherits it from its first instruction, and detached entry points, first thing."""
    try:
        current = os.nice(0)
        if current < NICENESS:
            os.nice(NICENESS - current)
    except OSError:  # pragma: no cover - not permitted here
        pass


def python_module(module: str) -> list[str]:
    """The command that runs ``module`` with this interpreter, from where the hook's own code
    comes: ``-P`` keeps ``-m`` from putting the working directory first on the module path.
    Claude Code runs hooks in the user's project, so without it a project holding a package of
    our name (this plugin's own checkout, or a repository made to) would run its code, not the
    installed plugin's, in every probe."""
    return [sys.executable, "-P", "-m", module]


def find_command(name: str) -> str:
    """An installed command of this package (``[project.scripts]``): beside this
    interpreter, where virtual environments, pipx and uv put it, else on ``PATH``
    (``pip install --user``)."""
    for folder in [os.path.dirname(sys.executable), *os.environ.get("PATH", "").split(os.pathsep)]:
        path = os.path.join(folder, name)
        if folder and os.access(path, os.X_OK) and not os.path.isdir(path):
            return path
    raise FileNotFoundError(f"command {name!r} is not installed beside {sys.executable} nor on PATH")


def spawn_detached(command: list[str], args: list[str], log_path: Path | str, env: dict[str, str] | None = None) -> int:
    """Run ``command + args`` detached (a bare command name is looked up with
    :func:`find_command`); return its pid."""
    log = os.fspath(log_path)
    os.makedirs(os.path.dirname(log) or ".", exist_ok=True)
    child_env = dict(os.environ if env is None else env)
    child_env.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    argv = [command[0] if os.sep in command[0] else find_command(command[0]), *command[1:], *args]
    if hasattr(os, "posix_spawn"):
        actions = [
            (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
            (os.POSIX_SPAWN_OPEN, 1, log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600),
            (os.POSIX_SPAWN_DUP2, 1, 2),
        ]
        # SIGTERM back to its default: a background hook (hooks/run) ignores it, and the
        # disposition would be inherited.
        return os.posix_spawn(argv[0], argv, child_env, file_actions=actions, setsid=True, setsigdef=(SIGTERM,))
    import subprocess  # pragma: no cover - platforms without posix_spawn

    with open(log, "ab") as fh:  # pragma: no cover
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=fh, stderr=fh, start_new_session=True, close_fds=True, env=child_env)
    return proc.pid  # pragma: no cover


def _spawn_or_note(command: list[str], args: list[str], log_path: str, env: dict[str, str]) -> None:
    """:func:`spawn_detached`; a command that cannot start leaves one line in its log."""
    try:
        spawn_detached(command, args, log_path, env)
    except OSError as exc:
        try:
            os.makedirs(os.path.dirname(log_path) or ".", exist_ok=True)
            with open(log_path, "a", encoding="utf-8") as fh:
                fh.write(f"rolling-graph: cannot start {' '.join(command)}: {exc}\n")
        except OSError:
            pass


# -- deferred starts -----------------------------------------------------------------------
#: Starts queued while ``defer`` is on: the hook process turns it on so that a new probe
#: never competes for the CPU with the hook's own output; it runs them after flushing.
_DEFERRED: list[tuple[list[str], list[str], str, dict[str, str]]] = []
defer = False


def spawn_later(command: list[str], args: list[str], log_path: str, env: dict[str, str]) -> None:
    """Start ``command + args`` detached now, or after the hook's output when deferring."""
    if defer:
        _DEFERRED.append((command, args, log_path, env))
        return
    _spawn_or_note(command, args, log_path, env)


def run_deferred() -> None:
    """Start what was queued. The hook calls it last, its output written: it lowers its own
    priority first, so a probe or worker competes with the user's session neither in its
    interpreter's start-up and imports (a third of a probe's CPU) nor after."""
    if _DEFERRED:
        lower_priority()
    while _DEFERRED:
        _spawn_or_note(*_DEFERRED.pop(0))


def pid_alive(pid: int) -> bool:
    """Does process ``pid`` run? A zombie (killed, not reaped yet) does not; a process of
    another user does (``EPERM``). Without ``/proc`` only the pid can be checked."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # (EPERM: alive, another user's)
        return True
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as fh:
            stat = fh.read()
        return not stat[stat.rindex(")") + 2 :].startswith(("Z", "X"))
    except (OSError, ValueError):
        return True
