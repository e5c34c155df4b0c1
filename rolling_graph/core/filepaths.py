"""File paths as the graph keys and shows them: relative to the worktree's top level.

A session names the same file many ways: ``/home/ada/src/app/lib/x.py`` in an Edit,
``lib/x.py`` in a Glob, ``x.py`` after a ``cd lib``. The graph keeps one node per file,
keyed and labelled by its path relative to the session's root (the git top level of the
first ``cwd``), so the id is the same in every session of the project. A path outside the
root stays absolute, with the home directory shortened to ``~``. A Windows session's paths
(``C:\\Users\\ada\\app\\x.py``) are read in Git Bash's form (``/c/Users/ada/app/x.py``), the
one its shell commands use, so they key and shorten like any other. Claude Code's own files
(transcripts, plans and task output under ``~/.claude`` and ``/tmp/claude-*``) are the
harness's, not the project's: they never become file nodes. A generated id in a path (a
hash, a UUID) reads as ``{id}``: the many files of one kind a project stores by id are one
node (:func:`fold_ids`).

String operations only: the hook calls this on every tool event and imports no ``re``.
"""

from __future__ import annotations

import os

from rolling_graph.core.ids import _SLUG_CHARS, ID_MAX, slugify
from rolling_graph.core.model import LABEL_MAX

#: Markers of the harness's own files (absolute paths only: a project may have a ``.claude``
#: directory of its own, which is the user's).
_HARNESS_PARTS = ("/.claude/", "/tmp/claude-", "/tmp/claude/", "/Temp/claude-", "/tool-results/")  # (macOS: /private/tmp/claude/; Windows: %TEMP%\claude-…)
_HOME_PREFIXES = ("/home/", "/Users/")


def posix_path(path: str) -> str:
    """A Windows path in the form the graph keys paths by: a drive's (``C:\\app\\x.py``,
    ``C:/app/x.py``) as Git Bash writes it (``/c/app/x.py``), a relative one's backslashes
    as slashes (``lib\\x.py`` → ``lib/x.py``, when it has no slash at all). Any other path as
    it is: a POSIX name may hold a backslash, so one with a slash keeps it."""
    if len(path) > 2 and path[1] == ":" and path[2] in "\\/" and path[0].isascii() and path[0].isalpha():
        return "/" + path[0].lower() + "/" + path[3:].replace("\\", "/")
    if "\\" in path and "/" not in path and not path.startswith("\\\\"):  # not a share (\\host\dir)
        return path.replace("\\", "/")
    return path


def find_root(cwd: str) -> str:
    """The git top level above ``cwd`` (a directory or worktree file named ``.git``), else
    ``cwd``; not resolved through symlinks, so payload paths under ``cwd`` still match."""
    cwd = cwd.rstrip("/") or "/"
    candidate = cwd
    while True:
        if os.path.exists(candidate + "/.git"):
            return candidate
        parent = os.path.dirname(candidate)
        if parent == candidate:
            return cwd
        candidate = parent


def is_harness_path(path: str) -> bool:
    """Claude Code's transcripts, plans, task outputs and tool-result files."""
    path = posix_path(path)
    if not path.startswith(("/", "~")):
        return False
    return any(part in path for part in _HARNESS_PARTS) or path.startswith("~/.claude/")


def relativize(path: str, root: str | None, cwd: str | None = None) -> str:
    """``path`` relative to ``root`` when it lies inside it; a relative ``path`` is taken
    from ``cwd`` first. Outside the root: absolute, ``/home/<user>/`` shortened to ``~/``.
    Windows paths, all three, as :func:`posix_path` reads them."""
    path = posix_path(path.strip())
    if not path:
        return path
    root = posix_path(root) if root else root
    cwd = posix_path(cwd) if cwd else cwd
    if not path.startswith(("/", "~")) and cwd:
        path = cwd.rstrip("/") + "/" + path
    if path.startswith("/"):
        path = os.path.normpath(path)
        if root:
            root = root.rstrip("/")
            if path == root:
                return "."
            if path.startswith(root + "/"):
                return fold_ids(path[len(root) + 1 :])
        return fold_ids(_short_home(path))
    return fold_ids(os.path.normpath(path) if "/." in path or path.startswith("./") else path)


#: What a generated id in a path reads as (:func:`fold_ids`).
ID_PART = "{id}"
_HEX = frozenset("0123456789abcdef")
_DIGITS = frozenset("0123456789")


def _generated(part: str) -> bool:
    """A hash or a UUID (``406b6b748d``, ``3f2a…-…``): hex digits, eight or more, both digits
    and letters (neither ``deadbeef`` nor ``20240101`` is one)."""
    low = part.lower()
    if len(low) == 36 and low.count("-") == 4:
        return set(low) <= _HEX | {"-"}
    return len(low) >= 8 and set(low) <= _HEX and not low.isdigit() and not low.isalpha()


def fold_ids(path: str) -> str:
    """``path`` with the generated ids of its parts as :data:`ID_PART`: one kind of file stored
    under many ids is one file to the graph (``0b/ce1a40f816/metadata.json`` and
    ``33/406b6b748d/metadata.json`` are ``{id}/{id}/metadata.json``; a two-character shard
    before an id is one too, and a file named by an id keeps its extension). Each of them
    touched once told a later session nothing; together they are what the project keeps."""
    if _DIGITS.isdisjoint(path):
        return path  # (most paths: an id has a digit; a UUID's version is one)
    parts = path.split("/")
    stem, dot, ext = parts[-1].rpartition(".")
    last = (stem, dot + ext) if dot and stem else (parts[-1], "")
    folded = [*parts[:-1], last[0]]
    ids = [_generated(part) for part in folded]
    if not any(ids):
        return path
    for i, part in enumerate(folded):
        shard = len(part) == 2 and set(part.lower()) <= _HEX and i + 1 < len(folded) and ids[i + 1]
        if ids[i] or shard:
            folded[i] = ID_PART
    return "/".join(folded) + last[1]


def _short_home(path: str) -> str:
    if path[2:3] == "/" and path[1:2].isalpha():  # a drive's (/c/Users/ada/…): its home like any other
        path = path[2:] if path[2:].startswith(_HOME_PREFIXES) else path
    for prefix in _HOME_PREFIXES:
        if path.startswith(prefix):
            rest = path[len(prefix) :]
            slash = rest.find("/")
            if slash > 0:
                return "~" + rest[slash:]
    return path


def file_label(path: str, limit: int = LABEL_MAX) -> str:
    """``path`` within ``limit`` characters, eliding the middle of the directory part and
    never the file name: ``lib/spotter_web/…/live/session_live.ex``."""
    if len(path) <= limit:
        return path
    head, _, name = path.rpartition("/")
    if len(name) + 2 > limit:
        return "…" + name[-(limit - 1) :]
    parts = head.split("/")
    budget = limit - len(name) - 2  # "…/" before the name
    kept_head: list[str] = []
    kept_tail: list[str] = []
    used = 0
    # Alternate: the first directories say where it lives, the last say what it is.
    i, j = 0, len(parts) - 1
    take_tail = True
    while i <= j:
        part = parts[j] if take_tail else parts[i]
        if used + len(part) + 1 > budget:
            break
        used += len(part) + 1
        if take_tail:
            kept_tail.insert(0, part)
            j -= 1
        else:
            kept_head.append(part)
            i += 1
        take_tail = not take_tail
    if not kept_head and not kept_tail:
        return "…/" + name
    return "/".join([*kept_head, "…", *kept_tail, name])


def file_id(path: str) -> str:
    """A stable node id for a (relative) path: its slug; a long one keeps its head and a
    short checksum of the whole path, so two long paths never share an id."""
    full = "-".join("".join(c if c in _SLUG_CHARS else " " for c in path.lower()).split())
    if len(full) <= ID_MAX:
        return slugify(path)
    from zlib import crc32

    return full[: ID_MAX - 9].rstrip("-") + "-" + format(crc32(path.encode("utf-8")), "08x")


#: What counts as a source file's extension (the corpus metric's "file basename" too).
SOURCE_EXTENSIONS = frozenset(
    """py pyi js jsx ts tsx mjs cjs rs go java kt kts scala rb ex exs erl hrl heex eex leex
    c h cc cpp hpp cs swift m mm php lua sh bash zsh fish sql md rst txt json jsonl yaml yml
    toml ini cfg conf lock css scss sass less html htm vue svelte xml gradle tf hcl proto
    graphql gql dockerfile mk ipynb r jl dart zig nim clj cljs elm hs ml mli fs fsx cxx erb mdx pl svg
    makefile""".split()
)


def looks_like_file(token: str) -> bool:
    """A token that names a file: has a dot-extension from :data:`SOURCE_EXTENSIONS`."""
    name = token.rpartition("/")[2]
    stem, dot, ext = name.rpartition(".")
    return bool(dot and stem and ext.lower() in SOURCE_EXTENSIONS)


def local_paths(text: str, root: str | None) -> str:
    """``text`` (a command line, an error line) with the worktree's absolute paths made
    relative (``/r/wt/feature/tests/x.py`` → ``tests/x.py``, the worktree itself ``.``), so an
    id made from it is the same in every worktree and clone of the project: the probe's
    command and error nodes and the gate's id of a failure (one rule)."""
    root = (root or "").rstrip("/")
    if not root:
        return text
    if len(root) > 3 and root[2] == "/" and root[1].isalpha() and ":" in text:
        text = _drive_paths_as(root, text)  # a Windows session's (/c/Users/ada/app): as its commands write it too
    if root not in text:
        return text
    out, start = [], 0
    while (at := text.find(root, start)) >= 0:
        end = at + len(root)
        nxt = text[end : end + 1]
        if nxt == "/":  # a path inside the worktree: relative to it
            out.append(text[start:at])
            start = end + 1
        elif nxt in ("", " ", "'", '"', ":", ";", ")"):  # the worktree itself
            out.append(text[start:at] + ".")
            start = end
        else:  # a longer name that merely starts the same (``/src/app-2``)
            out.append(text[start:end])
            start = end
    return "".join(out) + text[start:]


def _drive_paths_as(root: str, text: str) -> str:
    """``text`` with the Windows forms of the drive path ``root`` (``/c/Users/ada/app``) written
    as ``root``: ``C:/Users/ada/app/x.go``, and ``C:\\Users\\ada\\app\\x.go`` with its backslashes."""
    native = root[1].upper() + ":" + root[2:]
    for variant in (native, root[1] + ":" + root[2:]):
        text = text.replace(variant, root)
        back = variant.replace("/", "\\")
        while (at := text.find(back)) >= 0:
            end = at + len(back)
            stop = min((i for i in (text.find(c, end) for c in " \"';&|\n") if i >= 0), default=len(text))
            text = text[:at] + root + text[end:stop].replace("\\", "/") + text[stop:]
    return text
