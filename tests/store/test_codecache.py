"""store/codecache.py: the hook's modules from one file, used only while their sources are unchanged.

Each case runs a fresh interpreter on a copy of the package (so a test may edit a module and
its cache names that copy's files), installs the cache as ``rgraph-hook`` does, imports
modules and saves: what it prints is which modules the cache served and what they hold.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import rolling_graph
from rolling_graph.core.config import default_home
from rolling_graph.store import codecache

PACKAGE = Path(rolling_graph.__file__).resolve().parent

#: Imports what a PostToolUse hook imports first, then reports: for each module, whether the
#: cache served it, and the value of ``clock.EDITED`` (a name a test adds to the source).
PROBE = """
import json, sys
sys.path.insert(0, {root!r})
from rolling_graph.store import codecache
cache = codecache.install()
from rolling_graph import hook
from rolling_graph.capture import gate
from rolling_graph.core import clock
served = sorted(n for n, m in sys.modules.items() if n.startswith("rolling_graph.") and isinstance(m.__spec__.loader, codecache.CodeCache))
print(json.dumps({{"installed": cache is not None, "served": served, "edited": getattr(clock, "EDITED", None),
                  "file": clock.__file__, "saved": codecache.save()}}))
"""


@pytest.fixture
def package_copy(tmp_path: Path) -> Path:
    """A copy of the installed package under ``tmp_path/src`` (its own cache file)."""
    root = tmp_path / "src"
    shutil.copytree(PACKAGE, root / "rolling_graph", ignore=shutil.ignore_patterns("__pycache__"))
    return root


def _run(root: Path, home: Path, **env: str) -> dict[str, object]:
    proc = subprocess.run(
        [sys.executable, "-S", "-c", PROBE.format(root=str(root))],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "ROLLING_GRAPH_HOME": str(home), **env},
    )
    assert proc.returncode == 0, proc.stderr
    result: dict[str, object] = json.loads(proc.stdout.splitlines()[-1])
    return result


def _cache_file(root: Path, home: Path) -> Path:
    return Path(codecache.cache_path(str(root / "rolling_graph"), {"ROLLING_GRAPH_HOME": str(home)}))


def test_the_first_hook_writes_the_cache_and_the_next_one_is_served_from_it(package_copy: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    first = _run(package_copy, home)
    assert first["served"] == [] and first["saved"] is True
    cached = _cache_file(package_copy, home)
    assert cached.is_file() and cached.stat().st_mode & 0o077 == 0
    second = _run(package_copy, home)
    served = second["served"]
    assert isinstance(served, list)
    assert {
        "rolling_graph.hook",
        "rolling_graph.capture.gate",
        "rolling_graph.core.clock",
        "rolling_graph.store.sidecar",
    } <= set(served)
    assert second["saved"] is False  # nothing new: the file is not rewritten
    assert second["file"] == str(package_copy / "rolling_graph" / "core" / "clock.py")  # __file__ as in a normal import


def test_an_edited_module_is_imported_from_its_source_and_cached_anew(package_copy: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    _run(package_copy, home)
    clock = package_copy / "rolling_graph" / "core" / "clock.py"
    clock.write_text(clock.read_text(encoding="utf-8") + "\nEDITED = 'yes'\n", encoding="utf-8")
    after_edit = _run(package_copy, home)
    assert after_edit["edited"] == "yes"
    served = after_edit["served"]
    assert isinstance(served, list) and "rolling_graph.core.clock" not in served and "rolling_graph.hook" in served
    assert after_edit["saved"] is True
    again = _run(package_copy, home)
    assert again["edited"] == "yes" and "rolling_graph.core.clock" in again["served"]  # type: ignore[operator]


def test_a_module_an_upgrade_removed_leaves_the_cache(package_copy: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    extra = package_copy / "rolling_graph" / "core" / "gone_soon.py"
    extra.write_text("VALUE = 1\n", encoding="utf-8")
    probe = PROBE.replace(
        "from rolling_graph.core import clock\n",
        "from rolling_graph.core import clock\nimport rolling_graph.core.gone_soon\n",
    )
    subprocess.run(
        [sys.executable, "-S", "-c", probe.format(root=str(package_copy))],
        check=True,
        capture_output=True,
        timeout=60,
        env={**os.environ, "ROLLING_GRAPH_HOME": str(home)},
    )
    assert "rolling_graph.core.gone_soon" in codecache.read(str(_cache_file(package_copy, home)))
    extra.unlink()
    clock = package_copy / "rolling_graph" / "core" / "clock.py"  # an upgrade changes other modules too
    clock.write_text(clock.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    _run(package_copy, home)
    entries = codecache.read(str(_cache_file(package_copy, home)))
    assert "rolling_graph.core.gone_soon" not in entries and "rolling_graph.core.clock" in entries


@pytest.mark.parametrize("spoil", ["garbage", "another python", "writable by others"])
def test_a_cache_file_that_is_not_ours_is_ignored_and_replaced(package_copy: Path, tmp_path: Path, spoil: str) -> None:
    import marshal

    home = tmp_path / "home"
    _run(package_copy, home)
    cached = _cache_file(package_copy, home)
    if spoil == "garbage":
        cached.write_bytes(b"\x00not marshal at all")
    elif spoil == "another python":
        _tag, _magic, entries = marshal.loads(cached.read_bytes())
        cached.write_bytes(marshal.dumps((codecache.TAG, b"\x00\x00\r\n", entries)))
    else:
        cached.chmod(0o666)
    assert codecache.read(str(cached)) == {}
    result = _run(package_copy, home)
    assert result["served"] == [] and result["saved"] is True
    assert codecache.read(str(cached)) != {}


def test_it_can_be_turned_off(package_copy: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    for _ in range(2):
        result = _run(package_copy, home, ROLLING_GRAPH_CODE_CACHE="off")
        assert result == {**result, "installed": False, "served": [], "saved": False}
    assert not (home / "cache").exists()


def test_two_installs_sharing_a_state_directory_keep_a_cache_each(tmp_path: Path) -> None:
    env = {"ROLLING_GRAPH_HOME": str(tmp_path)}
    assert codecache.cache_path("/venv-a/site-packages/rolling_graph", env) != codecache.cache_path(
        "/venv-b/site-packages/rolling_graph", env
    )
    assert codecache.cache_path("/venv-a/site-packages/rolling_graph", env) == codecache.cache_path(
        "/venv-a/site-packages/rolling_graph", env
    )


@pytest.mark.parametrize(
    "env",
    [
        {},
        {"ROLLING_GRAPH_HOME": "~/elsewhere"},
        {"ROLLING_GRAPH_HOME": "/srv/rg", "HOME": "/home/ada"},
        {"HOME": "/home/ada"},
    ],
)
def test_the_cache_lives_in_the_state_directory(env: dict[str, str]) -> None:
    assert Path(codecache.cache_path("/x/rolling_graph", env)).parent == Path(default_home(env)) / "cache"


def test_the_hook_process_serves_every_module_of_ours_but_the_two_it_imports_first(tmp_path: Path) -> None:
    """Through the installed ``rgraph-hook`` as Claude Code starts it: a second PostToolUse
    finds the modules the first one cached (the cache names the installed package's files)."""
    hook = Path(sys.executable).with_name("rgraph-hook")
    home, project = tmp_path / "home", tmp_path / "project"
    project.mkdir()
    payload = json.dumps(
        {
            "session_id": "cache-1",
            "cwd": str(project),
            "hook_event_name": "PostToolUse",
            "tool_name": "Read",
            "tool_input": {"file_path": str(project / "app.py")},
            "tool_response": {"file": {"content": "x"}},
        }
    )
    env = {**os.environ, "ROLLING_GRAPH_HOME": str(home), "ROLLING_GRAPH_PROBE": "offline", "ROLLING_GRAPH_WARM": "off"}
    for _ in range(2):
        done = subprocess.run(
            [sys.executable, "-S", str(hook), "post-tool-use"],
            input=payload,
            capture_output=True,
            text=True,
            timeout=60,
            env=env,
        )
        assert done.returncode == 0 and done.stderr == ""
    written = list((home / "cache").glob("hook-code-*.marshal"))
    assert len(written) == 1
    entries = codecache.read(str(written[0]))
    assert {"rolling_graph.hook", "rolling_graph.capture.tools", "rolling_graph.store.sidecar"} <= set(entries)
    assert "rolling_graph.store.codecache" not in entries  # imported before the cache is installed
    assert not (home / "logs" / "hook.log").exists()


def test_doctor_says_what_the_cache_holds(tmp_path: Path) -> None:
    env = {"ROLLING_GRAPH_HOME": str(tmp_path)}
    assert codecache.describe(env).startswith("not written yet")
    assert codecache.describe({**env, "ROLLING_GRAPH_CODE_CACHE": "off"}).startswith("off")
    path = Path(codecache.cache_path(codecache.package_dir(), env))
    path.parent.mkdir(parents=True)
    clock = Path(codecache.package_dir()) / "core" / "clock.py"
    st = clock.stat()
    import marshal

    entries = {"rolling_graph.core.clock": (False, str(clock), (st.st_ino, st.st_size, st.st_mtime_ns), marshal.dumps(compile("", str(clock), "exec"))),
               "rolling_graph.core.gone": (False, str(clock.with_name("gone.py")), (1, 2, 3), b"")}
    path.write_bytes(marshal.dumps((codecache.TAG, codecache._magic(), entries)))
    path.chmod(0o600)
    assert codecache.describe(env).startswith("2 modules, 1 current")
    path.write_bytes(b"junk")
    assert "ignored" in codecache.describe(env)
