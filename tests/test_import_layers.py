"""Imports only point down, and no two modules import each other (directly or round a loop).

The layers, top to bottom:

* ``rolling_graph.cli`` — the ``rgraph`` command line; may import the two below.
* ``rolling_graph.reconcile`` — the warm graph (database, detached workers); may import the hot graph.
* the hot graph — ``rolling_graph/*.py`` and ``rolling_graph/probe/``; imports neither of the above.

Every module under ``rolling_graph/`` is read with :mod:`ast` (nothing is imported), and
an *edge* is any of: an ``import``/``from … import`` at any depth (function-local and
``TYPE_CHECKING`` blocks included); a string literal that names one of our modules (what
``importlib.import_module("…")``, ``spawn_later("…", …)`` and ``[python, "-m", "…"]`` take);
and a dynamic import with a computed name in a module that names no module literally
(the walker cannot see what it loads, so it is reported).

This module also names, once, which modules the hook process may load for each event
(:data:`HOOK_MODULES`), and checks the real hook process against it.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from conftest import prompt_payload, tool_payload

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "rolling_graph"
LAYERS = {"hot": 0, "reconcile": 1, "cli": 2}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def layer_of(module: str) -> str:
    for name in ("cli", "reconcile"):
        if module == f"rolling_graph.{name}" or module.startswith(f"rolling_graph.{name}."):
            return name
    return "hot"


@dataclass
class Module:
    name: str
    path: Path
    is_package: bool
    edges: dict[str, int] = field(default_factory=dict)  # imported module → first line
    unresolved: list[int] = field(default_factory=list)  # lines of computed dynamic imports


def all_modules() -> dict[str, Module]:
    return {module_name(p): Module(module_name(p), p, p.name == "__init__.py") for p in sorted(PACKAGE.rglob("*.py"))}


def _resolve_from(mod: Module, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = mod.name.split(".")
    if not mod.is_package:
        base.pop()
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def _is_dynamic_import(call: ast.Call) -> bool:
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    return name in ("import_module", "__import__")


def walk(modules: dict[str, Module]) -> None:
    """Fill in each module's edges (to our own modules only)."""
    for mod in modules.values():
        tree = ast.parse(mod.path.read_text(encoding="utf-8"), str(mod.path))
        literal_targets = False

        def add(target: str, line: int, mod: Module = mod) -> None:
            # A module's parent packages are imported before it anyway: not an edge.
            if target in modules and target != mod.name and not mod.name.startswith(f"{target}."):
                mod.edges.setdefault(target, line)

        computed: list[int] = []
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    add(alias.name, node.lineno)
            elif isinstance(node, ast.ImportFrom):
                base = _resolve_from(mod, node)
                for alias in node.names:
                    sub = f"{base}.{alias.name}"
                    add(sub if sub in modules else base, node.lineno)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in modules:
                literal_targets = True
                add(node.value, node.lineno)
            elif isinstance(node, ast.Call) and _is_dynamic_import(node):
                arg = node.args[0] if node.args else None
                if not (isinstance(arg, ast.Constant) and isinstance(arg.value, str)):
                    computed.append(node.lineno)
        if not literal_targets:
            mod.unresolved = computed


def upward_edges(modules: dict[str, Module]) -> list[str]:
    found = []
    for mod in modules.values():
        for target, line in mod.edges.items():
            if LAYERS[layer_of(target)] > LAYERS[layer_of(mod.name)]:
                found.append(f"{mod.path.name}:{line}: {layer_of(mod.name)} module {mod.name} imports {layer_of(target)} module {target}")
    return found


def cycles(modules: dict[str, Module]) -> list[list[str]]:
    """One concrete loop per strongly connected component of two or more modules (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in modules[v].edges:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                components.append(comp)

    for v in sorted(modules):
        if v not in index:
            visit(v)
    return [_loop_in(modules, set(comp)) for comp in components]


def _loop_in(modules: dict[str, Module], comp: set[str]) -> list[str]:
    """A shortest loop through the component's first module (breadth-first)."""
    start = min(comp)
    paths = {start: [start]}
    queue = [start]
    while queue:
        v = queue.pop(0)
        for w in sorted(modules[v].edges):
            if w == start:
                return [*paths[v], start]
            if w in comp and w not in paths:
                paths[w] = [*paths[v], w]
                queue.append(w)
    return sorted(comp)  # pragma: no cover - a component always has a loop


@pytest.fixture(scope="module")
def graph() -> dict[str, Module]:
    modules = all_modules()
    walk(modules)
    return modules


def test_the_walker_sees_every_kind_of_edge(tmp_path: Path, graph: dict[str, Module]) -> None:
    """The walker itself: function-local imports, relative imports and the names passed
    to ``import_module``, spawn helpers and ``-m`` are all edges."""
    pkg = tmp_path / "rolling_graph"
    (pkg / "reconcile").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "reconcile" / "__init__.py").write_text("")
    (pkg / "reconcile" / "worker.py").write_text("from .. import a\n")
    (pkg / "a.py").write_text("def f():\n    from .reconcile import worker\n")
    (pkg / "b.py").write_text("import importlib\nimportlib.import_module('rolling_graph.reconcile.worker')\n")
    (pkg / "c.py").write_text("spawn_later('rolling_graph.reconcile.worker', [], 'log', {})\nargv = ['python', '-m', 'rolling_graph.a']\n")
    (pkg / "d.py").write_text("import importlib\nname = 'x'\nimportlib.import_module(name)\n")
    modules: dict[str, Module] = {}
    for p in sorted(pkg.rglob("*.py")):
        parts = list(p.relative_to(tmp_path).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = Module(".".join(parts), p, p.name == "__init__.py")
    walk(modules)
    assert modules["rolling_graph.a"].edges == {"rolling_graph.reconcile.worker": 2}
    assert modules["rolling_graph.b"].edges == {"rolling_graph.reconcile.worker": 2}
    assert set(modules["rolling_graph.c"].edges) == {"rolling_graph.reconcile.worker", "rolling_graph.a"}
    assert modules["rolling_graph.d"].unresolved == [3]
    assert modules["rolling_graph.reconcile.worker"].edges == {"rolling_graph.a": 1}
    assert len(upward_edges(modules)) == 3  # a, b and c reach up; the worker reaching down is fine
    assert cycles(modules) == [["rolling_graph.a", "rolling_graph.reconcile.worker", "rolling_graph.a"]]
    assert len(graph) > 50  # and the real package was found


def test_no_module_imports_a_layer_above_its_own(graph: dict[str, Module]) -> None:
    assert upward_edges(graph) == []


def test_no_import_cycles_between_modules(graph: dict[str, Module]) -> None:
    assert [" → ".join(loop) for loop in cycles(graph)] == []


def test_every_dynamic_import_names_its_module(graph: dict[str, Module]) -> None:
    assert {m.name: m.unresolved for m in graph.values() if m.unresolved} == {}


# -- the hook's import budget ------------------------------------------------------------------
#: The modules of ours the hook process may load, by event: the one list of the hot path. A
#: module in none of these sets is not on the user's critical path and is ordinary Python
#: (imports at the top, ``typing`` at run time); one in them may defer imports and hide its
#: annotations behind ``TYPE_CHECKING = False``. Adding a module here costs every such event.
_EVERY_EVENT = {"rolling_graph", "hook", "config", "errors", "clock", "ids", "model", "normalize", "jsonio", "atomic", "journal",
                "sidecar", "sidecar_files", "sidecar_repair", "detach", "inject", "warm", "shape"}
_GATED = {"events", "gate", "index", "ledger", "filepaths"}  # an event turned into a pending event, and judged
_RENDERED = {"adjacency", "render", "sanitize", "lazyre", "focus", "decay", "weights", "index", "ledger"}
HOOK_MODULES: dict[str, set[str]] = {
    "session-start": _EVERY_EVENT | _RENDERED | _GATED | {"project", "snapshot", "graph_cache", "restore", "restore_layout",
                                                              "restore_sections", "restore_names", "restore_view", "rank_hot", "userfile",
                                                              # a compaction's summary, read, then redacted before it is queued
                                                              "compact_summary", "redact_cues", "redact_rules", "redact_private"},
    "user-prompt-submit": _EVERY_EVENT | _GATED | _RENDERED | {"project", "snapshot", "graph_cache", "entities", "redact", "redact_private", "branches",
                                                               "redact_rules", "redact_cues", "userfile"},
    "post-tool-use": _EVERY_EVENT | _GATED | _RENDERED | {"tool_data", "redact_private", "redact_cues", "redact_rules"},
    "stop": _EVERY_EVENT,
    "pre-compact": _EVERY_EVENT,
    "session-end": _EVERY_EVENT,
}
#: Libraries no hook event loads (model SDKs, the database driver, the CLI's toolkit), and
#: standard modules that cost more than the events that avoid them do in all.
NEVER = ("anthropic", "ollama", "psycopg", "pgvector", "typer", "rich", "pydantic", "httpx", "jsonpatch", "subprocess",
         "dataclasses")
NOT_BEYOND_THE_INTERPRETER = {
    "post-tool-use": ("re", "json", "enum", "datetime", "pathlib", "typing"),
    "session-start": ("re", "json", "pathlib", "hashlib", "tempfile", "typing"),
}
#: Nothing listens there: detached workers the hooks start give up at once.
UNREACHABLE_DSN = "host=/nonexistent-rgraph-test port=1 connect_timeout=1"


def _loaded(code: str, env: dict[str, str]) -> list[str]:
    """The modules a fresh interpreter has loaded after running ``code`` (which must not
    itself import what is measured: the listing is printed with ``repr``)."""
    proc = subprocess.run([sys.executable, "-c", f"{code}\nimport sys\nprint()\nprint(sorted(sys.modules))"],
                          capture_output=True, text=True, timeout=60, env=env)
    assert proc.returncode == 0, proc.stderr
    return list(ast.literal_eval(proc.stdout.strip().splitlines()[-1]))


@pytest.fixture(scope="module")
def hook_runs(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[str, list[str]]]:
    """A session's life through the real hook process, warm graph on (the default) with its
    project's resume snapshot on disk: (event, the modules that process had loaded)."""
    from rolling_graph.project import project_root
    from rolling_graph.reconcile.snapshot import write_snapshot

    home, project = tmp_path_factory.mktemp("hookhome"), tmp_path_factory.mktemp("project")
    root = project_root(str(project))
    write_snapshot(home, root, {"nodes": [{"id": "use-render", "label": "Use Render for hosting", "kind": "decision",
                                          "domain": "project", "weight": 0.8}], "edges": []})
    env = dict(os.environ, ROLLING_GRAPH_HOME=str(home), ROLLING_GRAPH_PROBE="offline", ROLLING_GRAPH_PROBE_MODE="async",
               ROLLING_GRAPH_WARM="on", ROLLING_GRAPH_DSN=UNREACHABLE_DSN)
    sid, cwd = "layers-1", str(project)
    compacted = home / "compacted.jsonl"  # the summary a compaction leaves: SessionStart queues it for the probe
    compacted.write_text(json.dumps({"type": "user", "isCompactSummary": True, "message": {"role": "user", "content":
                                     "This session continues one that ran out of context. We chose Redis for the cache."}}) + "\n")
    steps = [
        ("session-start", {"source": "startup"}),
        ("user-prompt-submit", prompt_payload(sid, "Let's go with Redis for the cache.", cwd=cwd)),
        ("post-tool-use", tool_payload(sid, "Bash", {"command": "pytest -q"}, {"stdout": "1 failed", "stderr": "AssertionError"}, cwd=cwd)),
        ("post-tool-use", tool_payload(sid, "Edit", {"file_path": f"{cwd}/app.py"}, {}, cwd=cwd)),
        ("post-tool-use", tool_payload(sid, "Bash", {"command": "ls src"}, {"stdout": "app.py", "stderr": ""}, cwd=cwd)),
        ("user-prompt-submit", prompt_payload(sid, "Now the invoice totals, please.", cwd=cwd)),
        ("stop", {}),
        ("pre-compact", {"trigger": "auto"}),
        ("session-start", {"source": "compact", "transcript_path": str(compacted)}),
        ("session-end", {"reason": "exit"}),
    ]
    runs = []
    for event, extra in steps:
        payload = home / "payload.json"
        payload.write_text(json.dumps({"session_id": sid, "cwd": cwd, "transcript_path": str(home / "none.jsonl"), **extra}))
        code = (f"import io, sys\nsys.stdin = io.TextIOWrapper(open({str(payload)!r}, 'rb'))\n"
                f"sys.argv = ['rgraph-hook', {event!r}]\nfrom rolling_graph import hook\nhook.main()")
        runs.append((event, _loaded(code, env)))
    return runs


def test_the_hook_loads_only_its_own_modules_for_each_event(hook_runs: list[tuple[str, list[str]]]) -> None:
    for event, modules in hook_runs:
        ours = {m.removeprefix("rolling_graph.") for m in modules if m.split(".")[0] == "rolling_graph"}
        assert ours - HOOK_MODULES[event] == set(), f"{event} loaded modules outside its budget"
        assert "hook" in ours


def test_the_hook_loads_no_heavy_library(hook_runs: list[tuple[str, list[str]]]) -> None:
    # What a bare interpreter already has loaded (an editable install's finder loads some).
    bare = set(_loaded("", dict(os.environ)))
    for event, modules in hook_runs:
        loaded = set(modules)
        assert [m for m in NEVER if m in loaded] == [], event
        extra = [m for m in NOT_BEYOND_THE_INTERPRETER.get(event, ()) if m in loaded and m not in bare]
        assert extra == [], event


def test_no_module_of_those_hooks_imports_those_standard_modules_when_it_loads() -> None:
    """The run-time check above cannot see what the interpreter had loaded before the hook
    ran, and an editable install's path hook loads ``re``: a module-level ``import re`` in
    a SessionStart module passed it there and cost a regular install ~1 MB and ~4 ms a
    start. So: none of these modules imports them at module level (in a function is fine)."""
    for event, modules in NOT_BEYOND_THE_INTERPRETER.items():
        for name in sorted(HOOK_MODULES[event]):
            path = PACKAGE / "__init__.py" if name == "rolling_graph" else PACKAGE / f"{name}.py"
            tree = ast.parse(path.read_text(encoding="utf-8"))
            imported = {alias.name.split(".")[0] for node in tree.body if isinstance(node, ast.Import) for alias in node.names}
            imported |= {(node.module or "").split(".")[0] for node in tree.body if isinstance(node, ast.ImportFrom) and not node.level}
            assert imported.isdisjoint(modules), f"{event}: rolling_graph.{name} imports {sorted(imported & set(modules))} when it loads"


def test_only_the_hooks_modules_hide_their_annotations_from_run_time() -> None:
    hot = {f"rolling_graph.{m}" if m != "rolling_graph" else m for s in HOOK_MODULES.values() for m in s}
    hiding = {module_name(p) for p in PACKAGE.rglob("*.py") if "\nTYPE_CHECKING = False" in p.read_text(encoding="utf-8")}
    assert hiding - hot == set(), "outside the hook's modules, use `from typing import TYPE_CHECKING` or plain imports"
    assert {m for m in hot if m not in all_modules()} == set(), "HOOK_MODULES names a module that does not exist"


def test_rgraph_starts_without_the_database_driver_or_a_model_sdk() -> None:
    """Commands that need the database import it inside the command: ``rgraph show`` (and
    the ``/graph`` slash command) start in a fraction of the time."""
    loaded = set(_loaded("import rolling_graph.cli.main", dict(os.environ)))
    assert [m for m in ("psycopg", "pgvector", "pgserver", "anthropic", "ollama", "httpx") if m in loaded] == []


def test_the_warm_worker_the_hooks_start_is_an_installed_command_of_the_warm_layer() -> None:
    """The hook starts warm work by command name (it never names a module above it); the
    one place binding that name to code is ``[project.scripts]``, and it is installed."""
    import tomllib

    from rolling_graph import warm

    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]
    target = scripts[warm.WORKER].split(":")[0]
    assert layer_of(target) == "reconcile" and target in all_modules()
    assert os.access(Path(sys.executable).with_name(warm.WORKER), os.X_OK), "reinstall: pip install -e ."


#: ``rgraph`` imports these at start-up (to register their commands): a command that needs the
#: database or a model SDK imports that inside the command (see the start-up test above).
CLI_COMMAND_MODULES = {"rolling_graph.reconcile.cli", "rolling_graph.reconcile.graduation_cli"}


def _local_imports_of_ours(path: Path) -> list[str]:
    found = []
    for f in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef):
            for n in ast.walk(f):
                if isinstance(n, ast.ImportFrom):
                    ours = bool(n.level) or (n.module or "").split(".")[0] == "rolling_graph"
                elif isinstance(n, ast.Import):
                    ours = any(a.name.split(".")[0] == "rolling_graph" for a in n.names)
                else:
                    continue
                if ours:
                    found.append(f"{path.name}:{n.lineno} {ast.unparse(n)}")
    return found


#: Modules allowed to defer imports of our own modules, and why (nothing else is).
DEFERRED_ON_PURPOSE = {
    # Loads only the probe backend it chooses: each wraps an SDK (`anthropic` alone costs
    # ~1.4 s), and a detached probe must not pay for the backends it does not use.
    "rolling_graph.probe.select": "one backend's SDK per probe process",
}


def test_outside_the_hooks_modules_our_imports_are_at_the_top() -> None:
    """Deferred imports are the hook's budget, not a style: elsewhere a module's
    dependencies are read at its top."""
    hot = {f"rolling_graph.{m}" if m != "rolling_graph" else m for s in HOOK_MODULES.values() for m in s}
    local = []
    for path in sorted(PACKAGE.rglob("*.py")):
        name = module_name(path)
        if name in hot or name in CLI_COMMAND_MODULES or layer_of(name) == "cli" or name in DEFERRED_ON_PURPOSE:
            continue
        local += _local_imports_of_ours(path)
    assert local == []


def test_our_own_modules_are_imported_without_a_fallback() -> None:
    """Every module of the package ships with it: no ``except ImportError`` around one."""
    guarded = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Try):
                continue
            catches = {ast.unparse(h.type) for h in node.handlers if h.type is not None}
            if not catches & {"ImportError", "ModuleNotFoundError"}:
                continue
            for stmt in node.body:
                for n in ast.walk(stmt):
                    if isinstance(n, ast.ImportFrom) and (n.level or (n.module or "").startswith("rolling_graph")):
                        guarded.append(f"{path.name}:{n.lineno}")
    assert guarded == []
