"""Reading a path someone else named: only a regular file, only so many bytes, never a wait.

A hook payload names files (``transcript_path``, ``cwd``'s ``.git``), and so do the
directories ``rgraph recover`` scans. Any of them can be ``/dev/zero`` (an endless read: 7.5 GB
of memory in 6 s), a FIFO (an ``open`` that blocks until someone writes), a directory, or a
sparse file of terabytes. Every such read goes through :func:`read_regular`: the path must
stat as a regular file, it is opened with ``O_NONBLOCK`` (a FIFO swapped in after the stat
cannot block the open) and checked again on the open descriptor, and at most ``limit``
bytes are read, in one ``pread`` of a known size.
"""

from __future__ import annotations

import os
import stat

#: ``O_NONBLOCK`` so a FIFO cannot block the open; ``O_NOCTTY`` so a terminal never becomes ours.
_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)


def regular_size(path: str) -> int | None:
    """The size of the regular file at ``path`` (symlinks followed), or None for anything
    else: missing, a directory, a device, a FIFO, a socket."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):  # (ValueError: a NUL in the path)
        return None
    return st.st_size if stat.S_ISREG(st.st_mode) else None


def read_regular(path: str, limit: int, start: int | None = None) -> tuple[bytes, int, int] | None:
    """``(data, offset, size)``: at most ``limit`` bytes of the regular file at ``path``,
    from byte ``start`` (None: the last ``limit`` bytes), where ``offset`` is where ``data``
    begins and ``size`` the file's size when it was read. None when ``path`` is not a
    readable regular file. A ``start`` past the end reads nothing (``offset == size``)."""
    if regular_size(path) is None:
        return None
    try:
        fd = os.open(path, _FLAGS)
    except (OSError, ValueError):
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):  # swapped between the stat and the open
            return None
        size = st.st_size
        offset = max(0, size - limit) if start is None else min(max(0, start), size)
        want = min(limit, size - offset)
        data = os.pread(fd, want, offset) if want > 0 else b""
    except OSError:
        return None
    finally:
        os.close(fd)
    return data, offset, size


def read_head(path: str, limit: int) -> bytes | None:
    """At most the first ``limit`` bytes of the regular file at ``path``, or None."""
    got = read_regular(path, limit, 0)
    return got[0] if got is not None else None


def read_tail(path: str, limit: int) -> bytes | None:
    """At most the last ``limit`` bytes of the regular file at ``path``, or None."""
    got = read_regular(path, limit)
    return got[0] if got is not None else None
