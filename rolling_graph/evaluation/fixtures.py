"""Evaluation against the gold-labelled fixtures, next to naive baselines.

Matching rule (also written into every gold file): ``slug(x)`` lowercases ``x`` and
replaces each run of characters outside ``[a-z0-9]`` with ``-``. A gold entity matches a
node when one of its ``match`` strings is a substring of ``slug(id)`` or ``slug(label)``,
and matches a text (an injection, a baseline block) when one is a substring of
``slug(text)``. A gold ``supersedes`` pair matches an edge whose relationship is
``supersedes``, whose source matches ``newer`` and whose target matches ``older``.
Gate: a replay event at which the gate fired is a true positive when gold fires at the
same index; a gold ``dead_man`` firing also accepts a firing one event early or late.
Stale: a superseded decision listed under a survival point's ``stale`` is "presented as
current" when some line of the injected text matches it and does not say ``supersed``
(retrieval prefers the newer decision; the older one may be shown as such).

Baselines get the same token budget and the same event stream:

* ``none``       — no memory: nothing is injected.
* ``recent``     — the names touched so far, most recent first.
* ``frequent``   — the names touched so far, most often touched first.
* ``full_dump``  — the project's own graph at that moment, every node in stored order
  (label, domain, weight), then edges, cut at the budget.

"Names" for the baselines are what a regex can see: paths, file names, CamelCase,
CONST_CASE, snake/kebab identifiers and capitalised words (minus common sentence words).
Everything above :func:`run_evaluation` is pure.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rolling_graph.replay.run import ReplayOptions, replay
from rolling_graph.replay.transcript import HookEvent, parse_transcripts

if TYPE_CHECKING:
    from rolling_graph.core.types import GraphDoc, Node

CHARS_PER_TOKEN = 3.0
BASELINES = ("none", "recent", "frequent", "full_dump")
DEAD_MAN_TOLERANCE = 1
RESPONSE_CHARS = 1500

_SLUG_RE = re.compile(r"[^a-z0-9]+")
_NAME_RES = (
    re.compile(r"(?:[\w.-]+/)+[\w.-]+"),
    re.compile(r"\b[\w-]+\.(?:py|md|toml|ya?ml|json|lua|sh|rst|txt|cfg|ini|js|ts|sql)\b"),
    re.compile(r"\b[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+\b"),
    re.compile(r"\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b"),
    re.compile(r"\b[a-z0-9]+(?:[_-][a-z0-9]+)+\b"),
    re.compile(r"\b[A-Z][a-zA-Z0-9]{2,}\b"),
)
_STOP = frozenset(
    ["the", "this", "that", "these", "those", "there", "here", "what", "which", "when", "where", "who", "why", "how", "and", "but", "for", "with", "from", "into", "onto", "also", "add", "use", "let", "lets", "let's", "make", "write", "give", "show", "set", "run", "keep", "build", "draft", "plan", "list", "help", "could", "should", "would", "can", "will", "our", "your", "my", "its", "it's", "i'm", "i've", "good", "different", "switching", "back", "final", "after", "before", "on", "off", "all", "any", "some", "every", "each", "now", "then", "next", "tests", "test", "done", "quiz", "suggest", "summarize", "activation", "partition", "different", "error", "info", "warning", "found", "file", "files", "todos"]
)


def slug(text: str) -> str:
    return _SLUG_RE.sub("-", text.lower()).strip("-")


def matches_text(entity: dict[str, Any], text_slug: str) -> bool:
    return any(alt in text_slug for alt in entity["match"])


def matches_node(entity: dict[str, Any], node_id: str, node: Node | None) -> bool:
    return matches_text(entity, slug(node_id)) or (node is not None and matches_text(entity, slug(node["label"])))


def recall(entities: Sequence[dict[str, Any]], hit: Iterable[str]) -> float:
    return len(set(hit)) / len(entities) if entities else 1.0


def graph_hits(entities: Sequence[dict[str, Any]], docs: Iterable[GraphDoc]) -> list[str]:
    """Keys of gold entities present as nodes in any of ``docs``."""
    nodes = [(nid, n) for doc in docs for nid, n in doc["nodes"].items()]
    return [e["key"] for e in entities if any(matches_node(e, nid, n) for nid, n in nodes)]


def text_hits(entities: Sequence[dict[str, Any]], text: str | None) -> list[str]:
    s = slug(text or "")
    return [e["key"] for e in entities if matches_text(e, s)]


_FAILS = ("won-t", "will-not", "doesn-t", "does-not", "can-t", "cannot", "isn-t")


def _negated(entity: dict[str, Any], item: str) -> bool:
    """``not X`` / ``no X`` / ``instead of X`` / ``rather than X``, or ``X won't …`` /
    ``X doesn't …``: the option is turned away."""
    return any(f"{neg}-{alt}" in item for neg in ("not", "no", "instead-of", "rather-than") for alt in entity["match"]) or any(
        f"{alt}-{fails}" in item for alt in entity["match"] for fails in _FAILS
    )


def stale_as_current(entities: Sequence[dict[str, Any]], text: str | None) -> list[str]:
    """Keys of superseded entities the text presents as current.

    A line that says ``supersed`` or ``reject`` is exempt (it presents the old decision as
    old: "superseded by", "[rejected option]", "rejects: X"); other
    lines are split into items at ``;``, ``,`` and ``—``, and an item that negates the
    entity (``not X``, ``no, X``, ``X won't …``) is exempt too. Any other item matching it counts.
    """
    out = []
    for e in entities:
        for line in (text or "").splitlines():
            if "supersed" in line.lower() or "reject" in line.lower():
                continue
            items = [slug(x) for x in re.split(r"[;,\u2014]", line)]
            if any(matches_text(e, it) and not _negated(e, it) for it in items):
                out.append(e["key"])
                break
    return out


def supersedes_hits(gold: Sequence[dict[str, str]], by_key: dict[str, dict[str, Any]], docs: Iterable[GraphDoc]) -> list[dict[str, Any]]:
    docs = list(docs)
    out = []
    for pair in gold:
        newer, older = by_key[pair["newer"]], by_key[pair["older"]]
        found = False
        for doc in docs:
            nodes = doc["nodes"]
            for edge in doc["edges"].values():
                if edge["relationship"] != "supersedes":
                    continue
                src, dst = edge["source"], edge["target"]
                if matches_node(newer, src, nodes.get(src)) and matches_node(older, dst, nodes.get(dst)):
                    found = True
        out.append({**pair, "found": found})
    return out


def gate_scores(gold_gate: Sequence[dict[str, Any]], fired: Sequence[int]) -> dict[str, Any]:
    """Precision and recall of the gate's firings against gold (see the module docstring)."""
    fired_left = set(fired)
    matched: list[dict[str, Any]] = []
    unmatched: list[dict[str, Any]] = []
    for g in gold_gate:  # exact index first
        if g["index"] in fired_left:
            fired_left.discard(g["index"])
            matched.append(g)
        else:
            unmatched.append(g)
    missed: list[dict[str, Any]] = []
    for g in unmatched:
        near = [i for i in (g["index"] - DEAD_MAN_TOLERANCE, g["index"] + DEAD_MAN_TOLERANCE) if i in fired_left]
        if "dead_man" in g["triggers"] and near:
            fired_left.discard(near[0])
            matched.append(g)
        else:
            missed.append(g)
    tp = len(matched)
    by_trigger: dict[str, dict[str, int]] = {}
    for g in gold_gate:
        for t in g["triggers"]:
            by_trigger.setdefault(t, {"gold": 0, "hit": 0})["gold"] += 1
    for g in matched:
        for t in g["triggers"]:
            by_trigger[t]["hit"] += 1
    return {
        "precision": tp / len(fired) if fired else (1.0 if not gold_gate else 0.0),
        "recall": tp / len(gold_gate) if gold_gate else 1.0,
        "tp": tp,
        "fp": len(fired_left),
        "fn": len(missed),
        "by_trigger": {t: v["hit"] / v["gold"] for t, v in by_trigger.items()},
        "missed": [{"index": g["index"], "triggers": g["triggers"], "snippet": g["snippet"]} for g in missed][:12],
    }


# ------------------------------------------------------------------ baselines
def event_text(event: HookEvent) -> str:
    """The text a naive baseline sees for one event."""
    p = event.payload
    if event.hook_event_name == "UserPromptSubmit":
        return str(p.get("prompt", ""))
    if event.hook_event_name != "PostToolUse":
        return ""
    raw = p.get("tool_input")
    inp = raw if isinstance(raw, dict) else {}
    parts = [str(v) for k, v in inp.items() if isinstance(v, str) and k in ("file_path", "command", "pattern", "path", "description", "prompt")]
    resp = p.get("tool_response")
    if p.get("tool_name") != "Read":
        parts.append((resp if isinstance(resp, str) else json.dumps(resp, default=str))[:RESPONSE_CHARS])
    return "\n".join(parts)


def names_in(text: str) -> list[str]:
    found: list[str] = []
    for rx in _NAME_RES:
        for m in rx.findall(text):
            if len(m) >= 3 and m.lower() not in _STOP and not m.isdigit():
                found.append(m)
    return list(dict.fromkeys(found))


def named_events(events: Iterable[HookEvent]) -> list[tuple[int, list[str]]]:
    """``(index, names)`` per event: what the name baselines can see."""
    return [(ev.index, names_in(event_text(ev))) for ev in events]


def name_stats(named: Sequence[tuple[int, list[str]]], upto: int | None = None) -> tuple[dict[str, int], dict[str, int]]:
    """``(last_seen_index, count)`` per name over events with index < ``upto``."""
    last: dict[str, int] = {}
    count: dict[str, int] = {}
    for index, names in named:
        if upto is not None and index >= upto:
            break
        for name in names:
            last[name] = index
            count[name] = count.get(name, 0) + 1
    return last, count


def truncate_to_budget(text: str, budget_tokens: int) -> str:
    return text[: int(budget_tokens * CHARS_PER_TOKEN)]


def names_block(heading: str, names: Sequence[str], budget_tokens: int) -> str:
    return truncate_to_budget(f"{heading}: " + ", ".join(names), budget_tokens) if names else ""


def dump_block(doc: GraphDoc | None, budget_tokens: int) -> str:
    if not doc:
        return ""
    lines = ["Graph dump:"]
    for n in doc["nodes"].values():
        lines.append(f"- {n['label']} [{n['domain']}] w={n['weight']:.2f}")
    for key in doc["edges"]:
        lines.append(f"- {key}")
    return truncate_to_budget("\n".join(lines), budget_tokens)


def baseline_block(kind: str, named: Sequence[tuple[int, list[str]]], upto: int | None, doc: GraphDoc | None, budget_tokens: int) -> str:
    """The block a baseline would inject before event ``upto`` (``None``: at the end)."""
    if kind == "none":
        return ""
    if kind == "full_dump":
        return dump_block(doc, budget_tokens)
    last, count = name_stats(named, upto)
    if kind == "recent":
        order = sorted(last, key=lambda n: -last[n])
        return names_block("Recently touched", order, budget_tokens)
    order = sorted(count, key=lambda n: (-count[n], -last[n]))
    return names_block("Most touched", order, budget_tokens)


def tokens(text: str) -> int:
    return -(-len(text) // int(CHARS_PER_TOKEN)) if text else 0


def injection_points(events: Sequence[HookEvent]) -> list[int]:
    """Where a naive memory re-injects its block: every prompt and every SessionStart."""
    return [e.index for e in events if e.hook_event_name in ("UserPromptSubmit", "SessionStart")]


def snapshot_before(snapshots: Mapping[int, GraphDoc], index: int) -> GraphDoc | None:
    earlier = [i for i in snapshots if i < index]
    return snapshots[max(earlier)] if earlier else None


def evaluate_fixture(gold: dict[str, Any], events: Sequence[HookEvent], records: Sequence[Any], final_docs: Sequence[GraphDoc],
                     snapshots: Mapping[int, GraphDoc], budget: int) -> dict[str, Any]:
    """Scores for the project and for each baseline, on one fixture at one budget."""
    entities = gold["entities"]
    by_key = {e["key"]: e for e in entities}
    by_index = {r.index: r for r in records}
    counted = [r for r in records if r.event in ("UserPromptSubmit", "PostToolUse")]
    survival = []
    for point in gold["survival"]:
        ents = [by_key[k] for k in point["entities"]]
        rec = by_index.get(point["index"])
        text = rec.injection if rec is not None else None
        stale = [by_key[k] for k in point.get("stale", [])]
        survival.append({"index": point["index"], "source": point["source"], "recall": recall(ents, text_hits(ents, text)),
                         "tokens": rec.injected_tokens if rec is not None else 0, "missed": [k for k in point["entities"] if k not in text_hits(ents, text)],
                         "stale_current": stale_as_current(stale, text), "stale": len(stale)})
    serialized = json.dumps(list(final_docs), default=str) + "".join(r.injection or "" for r in records)
    project = {
        "gate": gate_scores(gold["gate"], [r.index for r in records if r.fired]),
        "probe_rate": sum(r.probes for r in records) / len(counted) if counted else 0.0,
        "final_recall": recall(entities, graph_hits(entities, final_docs)),
        "final_missed": [e["key"] for e in entities if e["key"] not in graph_hits(entities, final_docs)],
        "survival": survival,
        "survival_recall": _mean([s["recall"] for s in survival]),
        "stale_rate": _stale_rate(survival),
        "cumulative_tokens": sum(r.injected_tokens for r in records),
        "max_injection_tokens": max((r.injected_tokens for r in records), default=0),
        "supersedes": supersedes_hits(gold["supersedes"], by_key, final_docs),
        "forbidden_leaks": [s[:12] + "…" for s in gold.get("forbidden", []) if s in serialized],
    }
    final_doc = final_docs[-1] if final_docs else None
    baselines: dict[str, Any] = {}
    points = injection_points(events)
    named = named_events(events)
    avg_line = len(dump_block(final_doc, 10**6)) / max(1, len(final_doc["nodes"]) + len(final_doc["edges"]) if final_doc else 0)
    for kind in BASELINES:
        surv = []
        stale_points = []
        for point in gold["survival"]:
            ents = [by_key[k] for k in point["entities"]]
            block = baseline_block(kind, named, point["index"], snapshot_before(snapshots, point["index"]), budget)
            surv.append(recall(ents, text_hits(ents, block)))
            stale = [by_key[k] for k in point.get("stale", [])]
            stale_points.append({"stale_current": stale_as_current(stale, block), "stale": len(stale)})
        final_block = baseline_block(kind, named, None, final_doc, budget)
        if kind == "none":
            cumulative = 0
        elif kind == "full_dump":  # estimated from the graph size at each point
            cumulative = sum(min(budget, int((by_index[i].nodes + by_index[i].edges) * avg_line / CHARS_PER_TOKEN)) for i in points if i in by_index)
        else:
            cumulative = sum(tokens(baseline_block(kind, named, i, None, budget)) for i in points)
        baselines[kind] = {"final_recall": recall(entities, text_hits(entities, final_block)), "survival_recall": _mean(surv),
                           "stale_rate": _stale_rate(stale_points), "cumulative_tokens": cumulative}
    has_survival = bool(gold["survival"])
    beats = {k: project["survival_recall"] > v["survival_recall"] for k, v in baselines.items()} if has_survival else {}
    return {"name": gold["name"], "budget": budget, "project": project, "baselines": baselines, "beats_on_survival": beats}


def _stale_rate(points: Sequence[dict[str, Any]]) -> float | None:
    total = sum(p["stale"] for p in points)
    return sum(len(p["stale_current"]) for p in points) / total if total else None


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


# ------------------------------------------------------------------ the I/O edge
def load_gold(fixtures_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(p.read_text(encoding="utf-8")) for p in sorted(fixtures_dir.glob("*.gold.json"))]


def run_evaluation(fixtures_dir: Path, budgets: Sequence[int] = (800, 400), names: Sequence[str] | None = None,
                   home: Path | None = None) -> dict[str, Any]:
    """Replay every gold fixture at each budget (offline probe, sync, transcript clock) and score it.
    The replays' state directories are deleted afterwards unless ``home`` says where to keep them."""
    rows = []
    base = home or Path(tempfile.mkdtemp(prefix="rgraph-eval-"))
    try:
        for gold in load_gold(fixtures_dir):
            if names and gold["name"] not in names:
                continue
            paths = [fixtures_dir / f for f in gold["transcripts"]]
            events = list(parse_transcripts(paths))
            for budget in budgets:
                options = replace(ReplayOptions(), budget=budget)
                result = replay(paths, options=options, home=base / f"{gold['name']}-{budget}")
                snapshots = dict(result.snapshots)
                row = evaluate_fixture(gold, events, result.records, list(result.final_docs.values()), snapshots, budget)
                row["events"] = len(result.records)
                row["elapsed_s"] = round(result.elapsed_s, 2)
                rows.append(row)
    finally:
        if home is None:
            shutil.rmtree(base, ignore_errors=True)
    return {"budgets": list(budgets), "rows": rows, "home": str(base) if home is not None else None}
