"""Which project a session belongs to: the git repository of its ``cwd`` when there is one.

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
        from _sha2 import sha256
    except ImportError:
        from hashlib import sha256


#: Bytes read from a worktree's ``.git`` file or a ``commondir`` file (a path, one line).
_POINTER_MAX = 4096


def _start(cwd: str | None) -> str:
    if not cwd:
        return os.path.realpath(os.getcwd())
    start = os.path.expanduser(cwd)
    try:
        return os.path.realpath(start)
    except OSError:
        return start


def worktree_root(cwd: str | None) -> str:
    """The top level of the git worktree holding ``cwd`` (the directory with ``.git``), else
    ``cwd`` itself. File paths are keyed relative to it, so the same file in two worktrees or
    two clones is one node."""
    start = _start(cwd)
    candidate = start
    while True:
        if os.path.exists(os.path.join(candidate, ".git")):
            return candidate
        parent = os.path.dirname(candidate)
        if parent == candidate:
            return start
        candidate = parent


def _read_pointer(path: str) -> str | None:
    from rolling_graph.store.userfile import read_head

    data = read_head(path, _POINTER_MAX)  # a regular file only: ``.git`` may be a FIFO in a hostile cwd
    return (data.decode("utf-8", errors="replace").strip() or None) if data is not None else None


def repository_root(worktree: str) -> str:
    """The repository a worktree belongs to, read from its ``.git`` without running git.

    ``.git`` a directory: the worktree is the repository's main one. ``.git`` a file
    (``gitdir: …/.git/worktrees/NAME``): that directory's ``commondir`` names the repository's
    git directory; the repository is the directory holding it (or the git directory itself for
    a bare repository). A ``.git`` file without ``commondir`` (a submodule) is its own project.
    """
    dotgit = os.path.join(worktree, ".git")
    if os.path.isdir(dotgit):
        return worktree
    pointer = _read_pointer(dotgit)
    if not pointer or not pointer.startswith("gitdir:"):
        return worktree
    gitdir = os.path.normpath(os.path.join(worktree, pointer[len("gitdir:") :].strip()))
    common = _read_pointer(os.path.join(gitdir, "commondir"))
    if not common:
        return worktree
    common_dir = os.path.normpath(os.path.join(gitdir, common.splitlines()[0]))
    return os.path.dirname(common_dir) if os.path.basename(common_dir) == ".git" else common_dir


def project_root(cwd: str | None) -> str:
    """The project of ``cwd``: its git repository (every worktree of one repository is one
    project), else ``cwd`` itself. A session's project is fixed when it starts."""
    return repository_root(worktree_root(cwd))


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
