"""Which project a session belongs to: the git top-level of its ``cwd`` when there is one.

Walks up the directory tree looking for ``.git`` (a directory, or a file for worktrees)
instead of running ``git``: the hook must not spawn processes it waits on.
"""

from __future__ import annotations

import hashlib
from pathlib import Path


def project_root(cwd: str | None) -> str:
    """Absolute path of the project for ``cwd`` (git top-level, else ``cwd`` itself)."""
    if not cwd:
        return str(Path.cwd().resolve())
    start = Path(cwd).expanduser()
    try:
        start = start.resolve()
    except OSError:
        return str(start)
    for candidate in (start, *start.parents):
        if (candidate / ".git").exists():
            return str(candidate)
    return str(start)


def project_key(root: str) -> str:
    """A short, filesystem-safe key for a project path (used for per-project files)."""
    name = Path(root).name or "root"
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "-" for ch in name)[:40]
    digest = hashlib.sha256(root.encode("utf-8")).hexdigest()[:12]
    return f"{safe}-{digest}"
