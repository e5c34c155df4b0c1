"""Which project a session belongs to: the git top-level of its ``cwd`` when there is one.

Walks up the directory tree looking for ``.git`` (a directory, or a file for worktrees)
instead of running ``git``: the hook must not spawn processes it waits on. Plain
``os.path`` and the builtin SHA-256: ``pathlib`` and ``hashlib`` cost the SessionStart
hook ~20 ms of imports (``pathlib`` pulls in ``re`` through ``fnmatch``; ``hashlib``
loads OpenSSL).
"""

from __future__ import annotations

import os

try:  # CPython's builtin implementation (no OpenSSL load); same digest as hashlib's
    from _sha256 import sha256
except ImportError:  # pragma: no cover - other interpreters, or Python >= 3.12
    try:
        from _sha2 import sha256  # type: ignore[no-redef]
    except ImportError:
        from hashlib import sha256  # type: ignore[assignment]


def project_root(cwd: str | None) -> str:
    """Absolute path of the project for ``cwd`` (git top-level, else ``cwd`` itself)."""
    if not cwd:
        return os.path.realpath(os.getcwd())
    start = os.path.expanduser(cwd)
    try:
        start = os.path.realpath(start)
    except OSError:
        return start
    candidate = start
    while True:
        if os.path.exists(os.path.join(candidate, ".git")):
            return candidate
        parent = os.path.dirname(candidate)
        if parent == candidate:
            return start
        candidate = parent


def _name(path: str) -> str:
    """The last component, as ``pathlib.PurePosixPath(path).name`` gives it."""
    parts = [p for p in path.split("/") if p and p != "."]
    return parts[-1] if parts else ""


def project_key(root: str) -> str:
    """A short, filesystem-safe key for a project path (used for per-project files)."""
    name = _name(root) or "root"
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "-" for ch in name)[:40]
    digest = sha256(root.encode("utf-8")).hexdigest()[:12]
    return f"{safe}-{digest}"
