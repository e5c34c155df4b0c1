"""Every file the README and docs/ name exists: a renamed or removed module leaves no reference.

A reference is a backticked path from the repository's top (`rolling_graph/hook.py`,
`bench/eval_points.py`, `tests/test_import_layers.py`, `docs/graduation.md`, …; a trailing
``:line``, ``::test`` or ``#anchor`` is not part of it), a backticked module path inside the
package as docs/architecture.md writes them (`capture/events.py`, `prompts/probe_v1.md`), or a
Markdown link's target. Patterns (``*``, ``<sid>``) and paths outside the repository
(`../shared/corpus/`) are not references to check.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
#: Top-level directories of the repository a reference may start with.
TOP = ("rolling_graph/", "bench/", "tests/", "fixtures/", "docs/", "plugin/", ".claude-plugin/")
#: The package's directories (its packages, ``prompts/``, ``data/``): a path inside the package.
INSIDE = frozenset(p.name for p in (ROOT / "rolling_graph").iterdir() if p.is_dir() and p.name != "__pycache__")


def references(text: str) -> list[str]:
    """The paths ``text`` names, as written (the checkable ones)."""
    found = [m.group(1).strip() for m in re.finditer(r"`([^`\n]+)`", text)]
    found += [m.group(1).strip() for m in re.finditer(r"\]\(([^)\s]+)\)", text) if "://" not in m.group(1)]
    out = []
    for ref in found:
        if any(c in ref for c in " *<>{}$") or ref.startswith(("../", "~", "/")):
            continue
        path = re.split(r"::|:|#", ref)[0].rstrip("/")
        if path.startswith(TOP) or (path.split("/")[0] in INSIDE and "." in path.rpartition("/")[2]):
            out.append(path)
    return out


def resolves(path: str) -> bool:
    if path.startswith(TOP):
        return (ROOT / path).exists()
    return (ROOT / "rolling_graph" / path).exists()


def test_the_reference_finder_sees_each_kind_of_reference() -> None:
    text = ("see `rolling_graph/hook.py:42`, `tests/core/test_model.py::test_x`, `capture/events.py`, [the design](docs/x.md), "
            "`<sid>.graph.json`, `probe/*_probe.py`, `../shared/corpus/`, `ROLLING_GRAPH_HOME`, [site](https://example.com)")
    assert references(text) == ["rolling_graph/hook.py", "tests/core/test_model.py", "capture/events.py", "docs/x.md"]
    assert not resolves("capture/tool_data.py") and resolves("capture/events.py")


def test_every_file_the_readme_and_the_docs_name_exists() -> None:
    missing = [f"{doc.name}: {path}" for doc in DOCS for path in references(doc.read_text(encoding="utf-8")) if not resolves(path)]
    assert missing == []
    assert sum(len(references(doc.read_text(encoding="utf-8"))) for doc in DOCS) > 50  # the check has something to check (79 references)


#: A plugin's commands are always namespaced: a bare ``/graph`` is an unknown command in Claude Code.
BARE_GRAPH_COMMAND = re.compile(r"(?<![\w:./-])/graph\b(?![\w./-])")


def test_the_docs_name_the_slash_command_by_its_namespaced_name() -> None:
    texts = {path.relative_to(ROOT).as_posix(): path.read_text(encoding="utf-8")
             for path in [*DOCS, *sorted((ROOT / "plugin" / "commands").glob("*.md"))]}
    bare = [f"{name}: {line.strip()}" for name, text in texts.items() for line in text.splitlines()
            if BARE_GRAPH_COMMAND.search(line)]
    assert bare == []
    assert BARE_GRAPH_COMMAND.search("run `/graph show`") and not BARE_GRAPH_COMMAND.search("`/rolling-graph:graph show`")
    assert "/rolling-graph:graph show" in texts["README.md"]
