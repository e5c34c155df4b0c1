"""Files that are never half-written, and the lock that orders their writers.

Claude Code runs every matching hook in parallel, and probes and workers run beside them:
every write goes through a temp file in the same directory and an atomic rename, under
an exclusive ``flock``. Readers need no lock: they see the old file or the new one.
"""

from __future__ import annotations

import fcntl
import os

from rolling_graph.core import jsonio
from rolling_graph.core.detach import pid_alive

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def write_atomic(path: str | os.PathLike[str], data: bytes, durable: bool = True) -> None:
    """Install ``data`` as the file ``path``, whole or not at all: the one way state is written.

    A temp file of a unique name in the same directory (created exclusively), every byte
    written (a short write, as under ``ulimit -f`` or a full disk, raises ``OSError``), the
    file fsynced, renamed over ``path``, the directory fsynced; on any failure the temp file
    is removed and the old file is left as it was. Readers see old or new, never half.

    ``durable=False`` skips both fsyncs: for the hook's volatile files only (state, index,
    caches), rewritten on every event. A process crash still leaves the old or the new file,
    never a truncated one; a power cut may lose the last event's counters. The journal, the
    graph and everything else are fsynced.
    """
    path = os.fspath(path)
    tmp = f"{path}.{os.urandom(4).hex()}.tmp.{os.getpid()}"  # the pid last: clean_stale_temp reads it
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        try:
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                if written <= 0:
                    raise OSError(f"short write to {tmp}: {len(view)} bytes not written")
                view = view[written:]
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        try:  # noqa: SIM105 - no contextlib on the hook path
            os.unlink(tmp)
        except OSError:
            pass
        raise
    if durable:
        _fsync_dir(os.path.dirname(path) or ".")


def write_text_atomic(path: str | os.PathLike[str], text: str, durable: bool = True) -> None:
    """:func:`write_atomic` of ``text`` in UTF-8."""
    write_atomic(path, text.encode("utf-8"), durable)


def _fsync_dir(directory: str) -> None:
    """Make a rename in ``directory`` durable (a filesystem that cannot fsync a directory,
    EINVAL, has nothing to flush)."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    except OSError as exc:
        if exc.errno != 22:  # EINVAL
            raise
    finally:
        os.close(fd)


#: A temp file this old is stale even if its pid is alive again (reused by another process):
#: a writer holds one for milliseconds.
TEMP_STALE_S = 600.0


def clean_stale_temp(directory: str, prefix: str = "", now: float | None = None) -> list[str]:
    """Remove ``<prefix>*.tmp.<pid>`` files in ``directory`` that :func:`write_atomic` left
    behind when killed: the pid is no longer running, or the file is older than
    :data:`TEMP_STALE_S`. Returns the names removed."""
    import time

    try:
        names = os.listdir(directory)
    except OSError:
        return []
    now = time.time() if now is None else now
    removed: list[str] = []
    for name in names:
        head, sep, pid = name.rpartition(".tmp.")
        if not sep or not head.startswith(prefix) or not pid.isdigit():
            continue
        path = os.path.join(directory, name)
        try:
            if pid_alive(int(pid)) and now - os.stat(path).st_mtime < TEMP_STALE_S:
                continue
            os.unlink(path)
            removed.append(name)
        except OSError:
            continue
    return removed


def read_json(path: str) -> dict[str, Any] | None:
    """The JSON object at ``path``; None when missing, truncated or not an object."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except FileNotFoundError:
        return None
    try:
        doc = jsonio.loads(data)
    except (ValueError, UnicodeDecodeError):
        return None
    return doc if isinstance(doc, dict) else None


class FileLock:
    """Exclusive ``flock`` on a lock file; blocking unless ``blocking=False``."""

    def __init__(self, path: str, blocking: bool = True) -> None:
        self.path = path
        self.blocking = blocking
        self.fd: int | None = None
        self.acquired = False

    def __enter__(self) -> FileLock:
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        flags = fcntl.LOCK_EX | (0 if self.blocking else fcntl.LOCK_NB)
        try:
            fcntl.flock(self.fd, flags)
            self.acquired = True
        except BlockingIOError:
            self.acquired = False
        return self

    def __exit__(self, *exc: object) -> None:
        if self.fd is not None:
            if self.acquired:
                fcntl.flock(self.fd, fcntl.LOCK_UN)
            os.close(self.fd)
            self.fd = None
