"""Imports only point down, and no two modules import each other (directly or round a loop).

The packages by concern, in layers (:data:`LAYERS`, docs/architecture.md draws them): a module
may import its own package and the packages of lower layers, never a package of its own
layer or above:

* 0 ``safety`` (redaction, sanitising) · 1 ``core`` (the graph's values and arithmetic) ·
  2 ``store`` (a session's files) · 3 ``capture`` (payload → event, gate) and ``render``
  (what the model is told) · 4 ``probe`` · 5 ``warm`` (PostgreSQL) · 6 ``hook`` (the
  ``rgraph-hook`` entry point) and ``graduation`` · 7 ``replay`` · 8 ``evaluation`` and
  ``worker`` (the ``rgraph-worker`` entry point) · 9 ``cli`` · 10 the package's lazy public API
  (``rolling_graph/__init__.py``).

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
#: Package (or entry-point module) under ``rolling_graph`` → its layer.
LAYERS = {"safety": 0, "core": 1, "store": 2, "capture": 3, "render": 3, "probe": 4, "warm": 5, "hook": 6, "graduation": 6,
          "replay": 7, "evaluation": 8, "worker": 8, "cli": 9, "": 10}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def layer_of(module: str) -> str:
    """The package (or entry-point module) right under ``rolling_graph`` that holds ``module``;
    ``""`` for the package itself. The walker of the synthetic package below uses ``hot``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


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


def upward_edges(modules: dict[str, Module], layers: dict[str, int] = LAYERS) -> list[str]:
    """Every edge to another package of the same layer or of a layer above."""
    found = []
    for mod in modules.values():
        for target, line in mod.edges.items():
            source, dest = layer_of(mod.name), layer_of(target)
            if source != dest and layers.get(dest, 0) >= layers.get(source, 0):
                found.append(f"{mod.path.name}:{line}: {source} module {mod.name} imports {dest} module {target}")
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
    assert len(upward_edges(modules, {"a": 0, "b": 1, "c": 2, "d": 3, "reconcile": 5})) == 3  # a, b and c reach up; the worker reaching down is fine
    assert cycles(modules) == [["rolling_graph.a", "rolling_graph.reconcile.worker", "rolling_graph.a"]]
    assert len(graph) > 50  # and the real package was found


def test_no_module_imports_a_layer_above_its_own(graph: dict[str, Module]) -> None:
    assert upward_edges(graph) == []


def test_no_import_cycles_between_modules(graph: dict[str, Module]) -> None:
    assert [" → ".join(loop) for loop in cycles(graph)] == []


def test_no_import_cycles_between_packages(graph: dict[str, Module]) -> None:
    """The same walk with each package folded into one node: no two packages import each
    other, however indirectly (the layers forbid it; this says so without them)."""
    packages: dict[str, Module] = {}
    for mod in graph.values():
        name = layer_of(mod.name)
        packages.setdefault(name, Module(name, mod.path, True))
    for mod in graph.values():
        for target, line in mod.edges.items():
            if layer_of(target) != layer_of(mod.name):
                packages[layer_of(mod.name)].edges.setdefault(layer_of(target), line)
    assert [" → ".join(loop) for loop in cycles(packages)] == []


def test_the_package_is_packages_by_concern_with_at_most_two_entry_points_at_its_top() -> None:
    """Besides ``__init__.py`` only the entry points stand at the top (``rgraph-hook`` and
    ``rgraph-worker``); every package has a docstring that says what it holds, and every
    package and entry point has its layer."""
    top = sorted(p.stem for p in PACKAGE.glob("*.py") if p.name != "__init__.py")
    assert top == ["hook", "worker"]
    packages = sorted(p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file())
    assert set(packages) | set(top) == set(LAYERS) - {""}
    for name in packages:
        tree = ast.parse((PACKAGE / name / "__init__.py").read_text(encoding="utf-8"))
        doc = ast.get_docstring(tree) or ""
        assert len(doc.split()) >= 20, f"rolling_graph/{name}/__init__.py says in a paragraph what the package holds"
        assert [type(node) for node in tree.body] == [ast.Expr], f"rolling_graph/{name}/__init__.py is its docstring only"


def test_every_dynamic_import_names_its_module(graph: dict[str, Module]) -> None:
    assert {m.name: m.unresolved for m in graph.values() if m.unresolved} == {}


# -- the hook's import budget ------------------------------------------------------------------
#: The modules of ours the hook process may load, by event: the one list of the hot path. A
#: module in none of these sets is not on the user's critical path and is ordinary Python
#: (imports at the top, ``typing`` at run time); one in them may defer imports and hide its
#: annotations behind ``TYPE_CHECKING = False``. Adding a module here costs every such event.
_EVERY_EVENT = {"rolling_graph", "hook", "capture", "capture.payload", "capture.text", "core", "core.config", "core.errors", "core.clock", "core.ids", "core.model", "core.normalize",
                "core.jsonio", "store", "store.atomic", "store.journal", "store.sidecar", "store.files", "store.repair", "core.detach",
                "render", "render.inject", "warm", "warm.hook_side", "store.shape",
                "store.codecache"}  # rgraph-hook installs it first (the test's hooks run without it)
#: An event turned into a pending event, and judged.
_GATED = {"capture.events", "capture.gate", "store.index", "core.ledger", "core.filepaths"}
_RENDERED = {"core.adjacency", "render.lod", "safety", "safety.sanitize", "core.lazyre", "core.focus", "core.decay", "core.weights",
             "store.index", "core.ledger"}
_RULES = {"safety.private", "safety.cues", "safety.rules"}  # the project's own redaction rules, no library
HOOK_MODULES: dict[str, set[str]] = {
    "session-start": _EVERY_EVENT | _RENDERED | _GATED | _RULES | {
        "store.project", "warm.snapshot", "store.graph_cache", "render.restore", "render.layout", "render.sections", "render.names",
        "render.view", "render.rank", "store.userfile", "core.vocabulary",
        "capture.compact_summary",  # a compaction's summary, read, then redacted before it is queued
        "render.view_cache",  # after a compaction: the graph's ranked view, kept beside it
        "warm.startup_block",  # a new session: the block the snapshot's writer kept beside the snapshot
        "warm.snapshot_files"},  # where the snapshot and its caches lie
    "user-prompt-submit": _EVERY_EVENT | _GATED | _RENDERED | _RULES | {
        "store.project", "warm.snapshot", "store.graph_cache", "capture.entities", "core.vocabulary", "safety.redact", "store.branches",
        "store.userfile", "render.notes", "warm.notes_cache", "warm.snapshot_files"},
    # render.notes and the notes' cache beside the project's snapshot (warm.notes_cache,
    # warm.snapshot_files, store.project): the tool-time notes. Not the snapshot's format
    # (warm.snapshot): a tool event reads the notes alone.
    "post-tool-use": _EVERY_EVENT | _GATED | _RENDERED | _RULES | {"capture.tools", "render.notes", "warm.notes_cache", "warm.snapshot_files",
                                                                   "store.project"},
    # A command that failed: its failure's line, as the probe reads it (capture.errors), tells
    # whether it is news. About one tool event in twenty-five (326 of the entire-cli sessions' 8,267).
    "post-tool-use, a failed command": _EVERY_EVENT | _GATED | _RENDERED | _RULES | {
        "capture.tools", "capture.errors", "render.notes", "warm.notes_cache", "warm.snapshot_files", "store.project"},
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
    "post-tool-use, a failed command": ("json", "datetime", "pathlib", "typing"),  # (its line's patterns: ``re``)
    # (``datetime``'s classes come from their C module: clock.classes)
    "session-start": ("re", "json", "pathlib", "hashlib", "tempfile", "typing", "datetime"),
    "user-prompt-submit": ("json", "datetime", "typing"),  # (a prompt's redaction may compile its rules: ``re``)
    "stop": ("re", "json", "datetime", "typing"),
    "pre-compact": ("re", "json", "datetime", "typing"),
    "session-end": ("re", "json", "datetime", "typing"),
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
    from rolling_graph.store.project import project_root
    from rolling_graph.warm.snapshot_write import write_snapshot

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
        ("post-tool-use, a failed command", tool_payload(sid, "Bash", {"command": "go test ./... | tail -3"}, {
            "stdout": "--- FAIL: TestTotals (0.01s)\nFAIL\tgithub.com/dev/app\t0.2s", "stderr": ""}, cwd=cwd)),
        ("post-tool-use", tool_payload(sid, "Edit", {"file_path": f"{cwd}/missing.py"}, "Error: File does not exist.", cwd=cwd)),
        ("post-tool-use", tool_payload(sid, "Edit", {"file_path": f"{cwd}/app.py"}, {}, cwd=cwd)),
        ("post-tool-use", tool_payload(sid, "Bash", {"command": "ls src"}, {"stdout": "app.py", "stderr": ""}, cwd=cwd)),
        ("user-prompt-submit", prompt_payload(sid, "Now the invoice totals, please.", cwd=cwd)),
        ("stop", {}),
        ("pre-compact", {"trigger": "auto"}),
        ("session-start", {"source": "compact", "transcript_path": str(compacted)}),
        ("session-end", {"reason": "exit"}),
    ]
    runs = []
    for label, extra in steps:
        event = label.split(",")[0]
        payload = home / "payload.json"
        payload.write_text(json.dumps({"session_id": sid, "cwd": cwd, "transcript_path": str(home / "none.jsonl"), **extra}))
        code = (f"import io, sys\nsys.stdin = io.TextIOWrapper(open({str(payload)!r}, 'rb'))\n"
                f"sys.argv = ['rgraph-hook', {event!r}]\nfrom rolling_graph import hook\nhook.main()")
        runs.append((label, _loaded(code, env)))
    return runs


def test_the_hook_loads_only_its_own_modules_for_each_event(hook_runs: list[tuple[str, list[str]]]) -> None:
    for event, modules in hook_runs:
        ours = {m.removeprefix("rolling_graph.") for m in modules if m.split(".")[0] == "rolling_graph"}
        assert ours - HOOK_MODULES[event] == set(), f"{event} loaded modules outside its budget"
        assert "hook" in ours
        assert ("capture.errors" in ours) == event.endswith("a failed command"), "only a failed command reads its failure's line"


def test_the_hook_loads_no_heavy_library(hook_runs: list[tuple[str, list[str]]]) -> None:
    # What a bare interpreter already has loaded (an editable install's finder loads some).
    bare = set(_loaded("", dict(os.environ)))
    for event, modules in hook_runs:
        loaded = set(modules)
        assert [m for m in NEVER if m in loaded] == [], event
        extra = [m for m in NOT_BEYOND_THE_INTERPRETER.get(event, ()) if m in loaded and m not in bare]
        assert extra == [], event


def _path_of(name: str) -> Path:
    """The file of a module named as in :data:`HOOK_MODULES` (a package: its ``__init__.py``)."""
    if name == "rolling_graph":
        return PACKAGE / "__init__.py"
    path = PACKAGE.joinpath(*name.split("."))
    return path / "__init__.py" if path.is_dir() else path.with_suffix(".py")


def test_no_module_of_those_hooks_imports_those_standard_modules_when_it_loads() -> None:
    """The run-time check above cannot see what the interpreter had loaded before the hook
    ran, and an editable install's path hook loads ``re``: a module-level ``import re`` in
    a SessionStart module passed it there and cost a regular install ~1 MB and ~4 ms a
    start. So: none of these modules imports them at module level (in a function is fine)."""
    for event, modules in NOT_BEYOND_THE_INTERPRETER.items():
        for name in sorted(HOOK_MODULES[event]):
            path = _path_of(name)
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
    the ``/rolling-graph:graph`` slash command) start in a fraction of the time."""
    loaded = set(_loaded("import rolling_graph.cli.main", dict(os.environ)))
    assert [m for m in ("psycopg", "pgvector", "pgserver", "anthropic", "ollama", "httpx") if m in loaded] == []


def test_the_warm_worker_the_hooks_start_is_an_installed_entry_point_above_the_hook() -> None:
    """The hook starts warm work by command name (it never names a module above it); the
    one place binding that name to code is ``[project.scripts]``, and it is installed. The
    worker is an entry point of its own (it replays transcripts to recover sessions, so it
    stands above the hook)."""
    import tomllib

    from rolling_graph.warm import hook_side as warm

    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]
    target = scripts[warm.WORKER].split(":")[0]
    assert target == "rolling_graph.worker" and LAYERS[layer_of(target)] > LAYERS["hook"] and target in all_modules()
    assert os.access(Path(sys.executable).with_name(warm.WORKER), os.X_OK), "reinstall: pip install -e ."


#: ``rgraph`` imports these at start-up (to register their commands): a command that needs the
#: database or a model SDK imports that inside the command (see the start-up test above).
CLI_COMMAND_MODULES = {"rolling_graph.cli.warm", "rolling_graph.cli.graduation"}


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
    # Each command loads what it runs: the first prompt's pull runs beside the user's session
    # and never loads the probe, the recovery queue or the reconcile's merge.
    "rolling_graph.worker": "one command's modules per worker process",
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
