"""Cold start from git: co-committed files stand in for sessions the warm graph has not seen.

For a project the warm graph does not know yet, the reconcile (a detached worker, never a
hook) reads ``git log --name-only`` of the project's repository, bounded by a number of
commits and a wall-clock budget, and records each commit's files as a co-access "session"
of source ``git`` (:mod:`rolling_graph.warm.coaccess`). Merge commits and commits that touch
more than :attr:`GitSeedSettings.max_files` files (renames, formatting sweeps, vendored
code) are skipped: they say little about which files go together. A repository that is
missing, not git, or slower than the budget seeds nothing; the sessions' own co-access
takes over from there.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from datetime import UTC, datetime

#: Marks the start of one commit's record in the log output.
_MARK = "\x1e"


@dataclass(frozen=True)
class GitSeedSettings:
    #: The newest commits read.
    max_commits: int = 300
    #: Wall-clock budget of the ``git log`` run (seconds); past it nothing is seeded.
    timeout_s: float = 3.0
    #: A commit touching more files than this is skipped.
    max_files: int = 30


DEFAULT = GitSeedSettings()


@dataclass(frozen=True)
class Commit:
    sha: str
    at: datetime
    files: tuple[str, ...]


def parse_log(text: str, max_files: int = DEFAULT.max_files) -> list[Commit]:
    """``git log --format=<mark>%H %ct --name-only`` output as commits (newest first), those
    with 1..``max_files`` files only. Malformed records are skipped."""
    out: list[Commit] = []
    for record in text.split(_MARK)[1:]:
        lines = [ln.strip() for ln in record.splitlines()]
        head = lines[0].split() if lines else []
        if len(head) != 2 or not head[1].isdigit() or len(head[0]) < 7 or not all(c in "0123456789abcdef" for c in head[0]):
            continue
        files = tuple(dict.fromkeys(f for f in lines[1:] if f and not f.startswith(("/", "~")) and "\x00" not in f))
        if 1 <= len(files) <= max_files:
            out.append(Commit(head[0], datetime.fromtimestamp(int(head[1]), tz=UTC), files))
    return out


def read_commits(root: str, settings: GitSeedSettings = DEFAULT) -> list[Commit]:
    """The project's recent commits, or none (not a repository, git missing, too slow)."""
    if not os.path.isdir(root) or not os.path.exists(os.path.join(root, ".git")):
        return []
    cmd = ["git", "-c", "core.quotepath=off", "-C", root, "log", f"-n{int(settings.max_commits)}", "--no-merges", "--no-renames",
           f"--format={_MARK}%H %ct", "--name-only", "--no-color", "--"]
    env = dict(os.environ, GIT_TERMINAL_PROMPT="0", LC_ALL="C")
    try:
        proc = subprocess.run(cmd, capture_output=True, timeout=settings.timeout_s, env=env, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return []
    if proc.returncode != 0:
        return []
    return parse_log(proc.stdout.decode("utf-8", errors="replace"), settings.max_files)
