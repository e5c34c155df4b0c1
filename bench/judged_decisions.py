#!/usr/bin/env python3
"""The decisions and requests the offline extractor finds in real sessions, to be judged.

    python bench/judged_decisions.py [--jobs 2] [--write] [--show]

Replays every compacting session of ``../shared/corpus/entire-cli/`` (``index.json``: those
with a compaction; or ``$ROLLING_GRAPH_CORPUS``) honestly through the hooks (offline probe,
sync, a state directory of its own, removed afterwards), and reads from the session's journal
every ``decision``, ``correction`` and ``request`` node an offline patch added. Each is located
in its transcript: the line whose text holds the sentence it was read from.

The judged file, ``bench/judged/decisions.jsonl``, holds one item a line: the session file,
the transcript line number (1-based), the kind (``decision``: decisions and corrections;
``request``), the label, and the judgement (``true``: ``judged``, and ``why`` in a few
words). Never transcript text: the corpus stays outside the project. ``--write`` rewrites it
with the items extracted now, keeping the judgement of every item that was there before and
leaving new ones unjudged (``judged: null``); ``--show`` prints each unjudged item beside its
source line (on the terminal only) for judging. Without options: prints the figures.

A *decision* is a choice between alternatives, stated or accepted by the user or stated by
Claude and not contradicted, that later work must respect; a *request* is something the user
asked to be done. ``tests/evaluation/test_judged_decisions.py`` pins the precision and the
count of true items.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rolling_graph.replay.run import ReplayOptions, replay  # noqa: E402

CORPUS = Path(os.environ.get("ROLLING_GRAPH_CORPUS") or Path(__file__).resolve().parent.parent.parent / "shared" / "corpus")
JUDGED = Path(__file__).resolve().parent / "judged" / "decisions.jsonl"
KINDS = {"decision": "decision", "correction": "decision", "request": "request"}


def compacting_sessions(corpus: Path = CORPUS) -> list[Path]:
    """The sessions of ``entire-cli/`` that compact, in the index's (time) order."""
    index = json.loads((corpus / "entire-cli" / "index.json").read_text(encoding="utf-8"))
    return [corpus / "entire-cli" / row["file"] for row in index if row.get("compactions")]


def _line_texts(path: Path) -> list[tuple[int, str, str]]:
    """``(line number, role, text)`` of every transcript line that carries text."""
    out = []
    with path.open(encoding="utf-8", errors="replace") as fh:
        for number, raw in enumerate(fh, 1):
            try:
                row = json.loads(raw)
            except ValueError:
                continue
            if not isinstance(row, dict):
                continue
            message = row.get("message")
            content = message.get("content") if isinstance(message, dict) else None
            parts: list[str] = []
            if isinstance(content, str):
                parts.append(content)
            elif isinstance(content, list):
                for block in content:
                    if isinstance(block, dict) and isinstance(block.get("text"), str):
                        parts.append(block["text"])
                    elif isinstance(block, dict) and block.get("type") == "tool_result":
                        parts.append(json.dumps(row.get("toolUseResult"), ensure_ascii=False) if row.get("toolUseResult") else "")
            text = "\n".join(parts)
            if text:
                out.append((number, str(row.get("type") or ""), text))
    return out


def _squash(text: str) -> str:
    return " ".join(text.replace("`", "").split()).lower()


def locate(lines: list[tuple[int, str, str]], probes: list[str], role: str | None) -> int | None:
    """The first line (of ``role``, when given) whose text holds one of ``probes``."""
    for probe in probes:
        needle = _squash(probe)[:120].rstrip("…").strip()
        if len(needle) < 4:
            continue
        for number, row_role, text in lines:
            if (role is None or row_role == role) and needle in _squash(text):
                return number
    return None


def extract(path: Path) -> list[dict[str, Any]]:
    """The decisions and requests the offline probe added in a replay of ``path``."""
    home = tempfile.mkdtemp(prefix="rgraph-judged-")
    try:
        replay([path], options=ReplayOptions(project="/tmp/project", snapshot_boundaries=False), home=home)
        nodes: dict[str, dict[str, Any]] = {}
        for journal in sorted(Path(home, "sessions").glob("*.journal.jsonl")):
            for raw in journal.read_text(encoding="utf-8").splitlines():
                try:
                    entry = json.loads(raw)
                except ValueError:
                    continue
                if not isinstance(entry, dict) or entry.get("kind") != "patch" or entry.get("backend") != "offline":
                    continue
                for op in entry.get("ops") or []:
                    value = op.get("value") if isinstance(op, dict) else None
                    if op.get("op") == "add" and isinstance(value, dict) and value.get("kind") in KINDS and op["path"].count("/") == 2:
                        nodes.setdefault(op["path"].split("/")[2], value)
    finally:
        shutil.rmtree(home, ignore_errors=True)
    lines = _line_texts(path)
    items = []
    for value in nodes.values():
        kind = KINDS[str(value["kind"])]
        label = str(value.get("label") or "")
        summary = str(value.get("summary") or "")
        answer = summary.split(" — A: ", 1)[1] if summary.startswith("Q: ") and " — A: " in summary else ""
        probes = [summary, label, answer]
        by_user = kind == "request"
        line = locate(lines, probes, "user" if by_user else None) or locate(lines, probes, None)
        items.append({"session": path.name, "line": line, "kind": kind, "label": label})
    return sorted(items, key=lambda i: (i["line"] or 0, i["kind"], i["label"]))


def key(item: dict[str, Any]) -> tuple[str, int | None, str, str]:
    return (item["session"], item["line"], item["kind"], item["label"])


def extract_all(sessions: list[Path], jobs: int = 2) -> list[dict[str, Any]]:
    with ProcessPoolExecutor(max(1, jobs)) as pool:
        return [item for items in pool.map(extract, sessions) for item in items]


def read_judged(path: Path = JUDGED) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def figures(items: list[dict[str, Any]], judged: list[dict[str, Any]]) -> dict[str, Any]:
    """Per kind: items, judged true, precision; and the items that have no judgement."""
    verdicts = {key(j): j.get("judged") for j in judged}
    out: dict[str, Any] = {"unjudged": [i for i in items if verdicts.get(key(i)) is None]}
    for kind in ("decision", "request"):
        mine = [i for i in items if i["kind"] == kind]
        true = sum(1 for i in mine if verdicts.get(key(i)) is True)
        out[kind] = {"items": len(mine), "true": true, "precision": round(true / len(mine), 4) if mine else 1.0}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=2, help="sessions replayed at once (default 2)")
    parser.add_argument("--write", action="store_true", help=f"rewrite {JUDGED.name}, keeping every judgement made")
    parser.add_argument("--show", action="store_true", help="print each unjudged item beside its source line")
    args = parser.parse_args()
    sessions = compacting_sessions()
    items = extract_all(sessions, args.jobs)
    judged = read_judged()
    if args.write:
        old = {key(j): j for j in judged}
        rows = []
        for item in items:
            prior = old.get(key(item), {})
            rows.append({**item, "judged": prior.get("judged"), "why": prior.get("why", "")})
        JUDGED.parent.mkdir(parents=True, exist_ok=True)
        JUDGED.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
        judged = rows
    result = figures(items, judged)
    if args.show:
        texts = {s.name: {n: t for n, _, t in _line_texts(s)} for s in sessions}
        for item in result["unjudged"]:
            source = texts[item["session"]].get(item["line"] or -1, "")
            print(json.dumps(item, ensure_ascii=False))
            print("   >>", " ".join(source.split())[:600])
    for kind in ("decision", "request"):
        f = result[kind]
        print(f"{kind}s: {f['items']} items, {f['true']} true, precision {f['precision']}")
    print(f"unjudged: {len(result['unjudged'])}")


if __name__ == "__main__":
    main()
