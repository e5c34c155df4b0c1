"""The hook's code cache: the compiled modules of this package that hook events import, read from
one file (``$ROLLING_GRAPH_HOME/cache/hook-code-<python>-<install>.marshal``) instead of being
found, opened and read one by one.

A hook event imports about forty of our modules. Python finds each in its directory, checks its
source, opens its ``.pyc`` and reads it: a quarter of a PostToolUse hook's own time on this
project's reference machine. From the cache a module costs one ``stat`` of its source and the
execution of its code.

It is as safe as Python's own bytecode cache: a module's entry carries the signature (inode, size,
mtime in ns) its source file had *before* its code was read, and is used only while the source
still has it. An upgrade, a reinstall or an edit falls back to the normal import, and the hook
rewrites the cache when it ends. Derived state, never fsynced: a missing, unreadable, foreign
(another Python, another user's, writable by others) file is ignored. ``ROLLING_GRAPH_CODE_CACHE=off``
turns it off. ``PYTHONDONTWRITEBYTECODE`` does not: it keeps ``.pyc`` files from beside the sources
(many container images set it), and this file lives in the state directory.

Only the hook process installs it (``rgraph-hook``, before it imports anything else of ours but
this package's and ``store``'s ``__init__``); everything else imports as usual.
"""

from __future__ import annotations

import marshal
import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from importlib.machinery import ModuleSpec
    from types import ModuleType

#: Changes when the file's layout does.
TAG = "rolling-graph-code-cache-1"
PACKAGE = "rolling_graph"
#: Values of ``ROLLING_GRAPH_CODE_CACHE`` that turn the cache off.
OFF = ("off", "0", "false", "no")

Signature = tuple[int, int, int]
#: A module's entry: (is a package, source path, the source's signature, marshalled code).
Entry = tuple[bool, str, Signature, bytes]


def _magic() -> bytes:
    """The bytecode format of this interpreter (:data:`importlib.util.MAGIC_NUMBER`, read from the
    import system already loaded rather than by importing :mod:`importlib.util`)."""
    return bytes(sys.modules["_frozen_importlib_external"].MAGIC_NUMBER)


def _fnv(text: str) -> str:
    """A short, stable name for ``text`` (64-bit FNV-1a): ``hash()`` differs between processes."""
    h = 0xCBF29CE484222325
    for byte in text.encode("utf-8", "surrogateescape"):
        h = ((h ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


def cache_path(package_dir: str, env: dict[str, str] | os._Environ[str] | None = None) -> str:
    """Where the cache of the package installed at ``package_dir`` lives, for this Python: one file
    per install, so two environments sharing a state directory never rewrite each other's."""
    env = os.environ if env is None else env
    # As rolling_graph.core.config.default_home (tests/store/test_codecache.py holds them together),
    # not imported from there: the cache is installed before any other module of ours.
    if env.get("ROLLING_GRAPH_HOME"):
        home = os.path.expanduser(env["ROLLING_GRAPH_HOME"])
    else:
        home = os.path.join(env.get("HOME") or os.path.expanduser("~"), ".claude", "rolling-graph")
    tag = sys.implementation.cache_tag or "python"
    return os.path.join(home, "cache", f"hook-code-{tag}-{_fnv(package_dir)}.marshal")


def _signature(path: str) -> Signature | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def read(path: str) -> dict[str, Entry]:
    """The entries of the cache file at ``path``; none when it is missing, unreadable, written by
    another Python or not this user's own (owned by another, or writable by group or others:
    its code would run in every hook)."""
    try:
        with open(path, "rb") as fh:
            st = os.fstat(fh.fileno())
            if (hasattr(os, "getuid") and st.st_uid != os.getuid()) or st.st_mode & 0o022:
                return {}
            tag, magic, entries = marshal.loads(fh.read())
    except (OSError, EOFError, ValueError, TypeError):
        return {}
    if tag != TAG or magic != _magic() or not isinstance(entries, dict):
        return {}
    return entries


class CodeCache:
    """A meta-path finder and loader for this package's submodules, served from the cache's entries
    while their sources are unchanged; anything else is left to the normal import."""

    def __init__(self, path: str, entries: dict[str, Entry]) -> None:
        self.path = path
        self.entries = entries
        #: Ours, imported before the cache was: never looked up here, so never written.
        self.before = frozenset(name for name in sys.modules if name.startswith(PACKAGE + "."))
        #: A module of ours was imported the normal way (new, or its entry stale): rewrite on save.
        self.changed = False

    # -- finder ---------------------------------------------------------------------------
    def find_spec(
        self, name: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if not name.startswith(PACKAGE + "."):
            return None
        entry = self.entries.get(name)
        if entry is None or not isinstance(entry, tuple) or len(entry) != 4:
            self.changed = True
            return None
        is_package, origin, signature, _ = entry
        if _signature(origin) != signature:
            del self.entries[name]
            self.changed = True
            return None
        module_spec = type(sys.__spec__)  # importlib.machinery.ModuleSpec, without importing it
        spec: ModuleSpec = module_spec(name, self, origin=origin, is_package=is_package)  # type: ignore[arg-type]  # a loader by protocol
        spec.has_location = True  # __file__ is the source, as in a normal import
        if is_package:
            spec.submodule_search_locations = [os.path.dirname(origin)]
        return spec

    # -- loader ---------------------------------------------------------------------------
    def create_module(self, spec: ModuleSpec) -> None:
        return None  # the default module object

    def exec_module(self, module: ModuleType) -> None:
        code = marshal.loads(self.entries[module.__name__][3])
        exec(code, module.__dict__)  # noqa: S102 - our own module's code, compiled by this Python

    # -- writing --------------------------------------------------------------------------
    def save(self) -> bool:
        """Add the modules of ours this process imported the normal way and write the file (when
        anything changed). Returns whether it was written. Never raises."""
        if not self.changed:
            return False
        try:
            # An entry whose source changed or went (an upgrade that dropped a module) is dropped.
            entries = {
                name: entry
                for name, entry in self.entries.items()
                if name in sys.modules or _signature(entry[1]) == entry[2]
            }
            for name, module in list(sys.modules.items()):
                if name.startswith(PACKAGE + ".") and name not in entries and name not in self.before:
                    entry = _entry_of(name, module)
                    if entry is not None:
                        entries[name] = entry
            from rolling_graph.store.atomic import write_atomic  # loaded already: the hook has written its state

            os.makedirs(os.path.dirname(self.path), mode=0o700, exist_ok=True)
            write_atomic(self.path, marshal.dumps((TAG, _magic(), entries)), durable=False)  # derived: not fsynced
        except Exception:  # the cache is an optimisation: the next hook imports as usual
            return False
        self.changed = False
        return True


def _entry_of(name: str, module: ModuleType) -> Entry | None:
    """The entry of a module the normal import loaded from its source file, or None (a namespace
    package, a module built another way). The source's signature is taken before its code is read,
    so a file replaced in between is stale at the next use rather than cached with new code."""
    spec = getattr(module, "__spec__", None)
    get_code = getattr(getattr(spec, "loader", None), "get_code", None)
    origin = getattr(spec, "origin", None)
    if spec is None or get_code is None or not isinstance(origin, str) or not origin.endswith(".py"):
        return None
    signature = _signature(origin)
    if signature is None:
        return None
    code = get_code(name)
    if code is None:
        return None
    return (spec.submodule_search_locations is not None, origin, signature, marshal.dumps(code))


def package_dir() -> str:
    """The directory of the package this module belongs to (the install the cache is keyed by)."""
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def describe(env: dict[str, str] | os._Environ[str] | None = None) -> str:
    """What ``rgraph doctor`` says of this install's cache: off, not written yet, or how many
    modules it holds and how many of them a hook would take from it now."""
    env = os.environ if env is None else env
    if env.get("ROLLING_GRAPH_CODE_CACHE", "").lower() in OFF:
        return "off (ROLLING_GRAPH_CODE_CACHE): hooks import their modules one by one"
    path = cache_path(package_dir(), env)
    if not os.path.exists(path):
        return f"not written yet: the next hook event writes {path}"
    entries = read(path)
    if not entries:
        return f"{path} is not this Python's or not yours: ignored, and rewritten by the next hook event"
    current = sum(1 for entry in entries.values() if _signature(entry[1]) == entry[2])
    return f"{len(entries)} modules, {current} current (the rest are imported anew and rewritten): {path}"


_installed: CodeCache | None = None


def install(env: dict[str, str] | os._Environ[str] | None = None) -> CodeCache | None:
    """Serve this package's submodules from the cache (first on :data:`sys.meta_path`); the
    installed cache, or None when turned off. Never raises."""
    global _installed
    env = os.environ if env is None else env
    if _installed is not None or env.get("ROLLING_GRAPH_CODE_CACHE", "").lower() in OFF:
        return _installed
    try:
        path = cache_path(package_dir(), env)
        cache = CodeCache(path, read(path))
    except Exception:
        return None
    sys.meta_path.insert(0, cache)
    _installed = cache
    return cache


def save() -> bool:
    """Write the installed cache if this process imported a module of ours it did not hold."""
    return _installed.save() if _installed is not None else False


def uninstall() -> None:
    """Take the installed cache off :data:`sys.meta_path` (tests)."""
    global _installed
    if _installed is not None and _installed in sys.meta_path:
        sys.meta_path.remove(_installed)
    _installed = None
