"""One state directory: adopt what earlier versions left in the plugin's data directory.

Versions before 0.2 kept their state in ``$CLAUDE_PLUGIN_DATA`` when Claude Code set it
(``~/.claude/plugins/data/<plugin>-<marketplace>/``), while a terminal's ``rgraph`` read
``~/.claude/rolling-graph``: a user saw "no sessions yet" after a real session. Now every
process uses ``$ROLLING_GRAPH_HOME`` (default ``~/.claude/rolling-graph``), and the plugin's data
directory holds only what belongs to one installation (its bootstrapped ``venv``).

:func:`adopt` moves the state an old version left there into the state directory. Nothing is
lost: a file that exists on both sides is kept twice, the older copy under
``adopted/<plugin-data name>/``. It runs on ``SessionStart`` when ``$CLAUDE_PLUGIN_DATA`` holds
state (one ``stat`` otherwise) and from ``rgraph doctor``.
"""

from __future__ import annotations

import os
import shutil

#: What an old version kept in its state directory, per kind of entry.
STATE_DIRS = ("sessions", "snapshots", "queue", "usage", "memory", "graduation")
STATE_FILES = ("config.toml",)


def has_state(directory: str) -> bool:
    """Whether ``directory`` holds state an old version left (cheap: a few ``stat`` calls)."""
    return any(os.path.isdir(os.path.join(directory, name)) for name in STATE_DIRS) or any(
        os.path.isfile(os.path.join(directory, name)) for name in STATE_FILES
    )


def plugin_data_dirs(user_home: str | None = None) -> list[str]:
    """Every plugin data directory of this user that holds rolling-graph state."""
    root = os.path.join(user_home or os.path.expanduser("~"), ".claude", "plugins", "data")
    try:
        names = sorted(os.listdir(root))
    except OSError:
        return []
    paths = [os.path.join(root, name) for name in names if name.startswith("rolling-graph")]
    return [path for path in paths if has_state(path)]


def _move(src: str, dst: str, spare_dir: str) -> bool:
    """Move one file; if ``dst`` exists keep the newer at ``dst`` and the older in ``spare_dir``."""
    if not os.path.exists(dst):
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.move(src, dst)
        return True
    older, newer = (src, dst) if os.path.getmtime(src) <= os.path.getmtime(dst) else (dst, src)
    os.makedirs(spare_dir, exist_ok=True)
    shutil.move(older, os.path.join(spare_dir, os.path.basename(older)))
    if newer == src:
        shutil.move(src, dst)
    return True


def _postmaster_running(pgdata: str) -> bool:
    try:
        with open(os.path.join(pgdata, "postmaster.pid"), encoding="utf-8") as fh:
            pid = int(fh.readline())
        os.kill(pid, 0)
    except (OSError, ValueError):
        return False
    return True


def adopt(home: str, plugin_data: str) -> int:
    """Move the state under ``plugin_data`` into ``home``; returns how many files moved.

    The embedded database directory moves only when ``home`` has none and no server runs
    from it; otherwise it stays, and ``rgraph doctor`` says so.
    """
    if os.path.realpath(home) == os.path.realpath(plugin_data):
        return 0
    moved = 0
    spare_root = os.path.join(home, "adopted", os.path.basename(os.path.normpath(plugin_data)))
    for name in STATE_DIRS:
        src_dir = os.path.join(plugin_data, name)
        if not os.path.isdir(src_dir):
            continue
        for parent, _dirs, files in os.walk(src_dir):
            rel = os.path.relpath(parent, src_dir)
            for file_name in files:
                target = os.path.normpath(os.path.join(home, name, rel, file_name))
                moved += _move(os.path.join(parent, file_name), target, os.path.normpath(os.path.join(spare_root, name, rel)))
        shutil.rmtree(src_dir, ignore_errors=True)
    for name in STATE_FILES:
        src = os.path.join(plugin_data, name)
        if os.path.isfile(src):
            moved += _move(src, os.path.join(home, name), spare_root)
    pgdata = os.path.join(plugin_data, "pg")
    if os.path.isdir(pgdata) and not os.path.exists(os.path.join(home, "pg")) and not _postmaster_running(pgdata):
        os.makedirs(home, exist_ok=True)
        shutil.move(pgdata, os.path.join(home, "pg"))
        moved += 1
    return moved
