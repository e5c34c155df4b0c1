"""The offline probe: a deterministic, rule-based extractor (no network, no model).

It reads the batch of pending events and proposes RFC 6902 operations exactly as a model
would, so its output goes through the same validation. What it extracts:

* prompts: decisions ("let's go with X") as ``decision`` nodes that ``decides`` the names
  they mention; corrections ("actually, use Y instead of X") as ``correction`` nodes that
  ``supersedes`` the earlier decision they reverse; named entities, code names and paths;
  the domain of each from its words
* tool events: files edited (``edits`` from the active topic) and read; test and build
  commands (``tests``); errors (``blocks`` the active topic)
* names the graph already holds are activated (weight signal 1.0), not re-added
"""

from __future__ import annotations

import re
from typing import Any

from ..entities import (
    POSITIVE_RE,
    classify_domain,
    has_correction,
    has_decision,
    keywords,
    names_in,
    negated_terms,
    sentences,
    statement,
)
from ..model import slugify
from .base import ProbeResult

_TEST_WORDS = (
    "pytest",
    "npm test",
    "yarn test",
    "pnpm test",
    "cargo test",
    "go test",
    "make test",
    "jest",
    "vitest",
    "tox",
    "unittest",
)
_BUILD_WORDS = ("make", "npm run build", "cargo build", "go build", "pip install", "uv sync", "docker build", "tsc")
_EDIT_TOOLS = ("Edit", "MultiEdit", "Write", "NotebookEdit")
MAX_NODES_PER_PROBE = 24
_DEFINED_RE = re.compile(r"^\s*(?:export\s+)?(?:class|struct|interface|enum|trait)\s+([A-Z][A-Za-z0-9_]{2,})", re.MULTILINE)
#: Stay under the validator's operation bound (rolling_graph.patch.MAX_OPS).
MAX_OPS = 76


def _file_label(path: str) -> str:
    return path if len(path) <= 100 else "…" + path[-99:]


class _Proposal:
    def __init__(self, doc: dict[str, Any]) -> None:
        self.nodes: dict[str, Any] = doc.get("nodes", {})
        self.edges: dict[str, Any] = doc.get("edges", {})
        self.ops: list[dict[str, Any]] = []
        self.added: dict[str, dict[str, Any]] = {}
        self.activated: set[str] = set()
        self.edge_keys: set[str] = set()
        self.notes: list[str] = []

    def exists(self, nid: str) -> bool:
        return nid in self.nodes or nid in self.added

    def full(self) -> bool:
        return len(self.ops) >= MAX_OPS

    def node(self, label: str, domain: str, kind: str, summary: str | None = None) -> str | None:
        nid = slugify(label)
        if self.full():
            return nid if self.exists(nid) else None
        if self.exists(nid):
            if nid in self.nodes and nid not in self.activated:
                self.activated.add(nid)
                self.ops.append({"op": "replace", "path": f"/nodes/{nid}/weight", "value": 1.0})
            return nid
        if len(self.added) >= MAX_NODES_PER_PROBE:
            return None
        value: dict[str, Any] = {"label": label, "domain": domain, "kind": kind}
        if summary:
            value["summary"] = summary
        if kind in ("decision", "correction"):
            value["confidence"] = "correction" if kind == "correction" else "observed"
        self.added[nid] = value
        self.ops.append({"op": "add", "path": f"/nodes/{nid}", "value": value})
        return nid

    def edge(self, source: str | None, verb: str, target: str | None, strength: float = 0.6) -> None:
        if not source or not target or source == target or self.full():
            return
        key = f"{source}|{verb}|{target}"
        if key in self.edge_keys:
            return
        self.edge_keys.add(key)
        if key in self.edges:
            self.ops.append({"op": "replace", "path": f"/edges/{key}/strength", "value": 1.0})
        else:
            self.ops.append(
                {
                    "op": "add",
                    "path": f"/edges/{key}",
                    "value": {"source": source, "target": target, "relationship": verb, "strength": strength},
                }
            )

    def label_of(self, nid: str) -> str:
        node = self.nodes.get(nid) or self.added.get(nid) or {}
        return str(node.get("label", nid))

    def kind_of(self, nid: str) -> str:
        node = self.nodes.get(nid) or self.added.get(nid) or {}
        return str(node.get("kind", ""))

    def decisions(self) -> list[str]:
        """Live decisions (not superseded), oldest first, this batch's last."""
        superseded = {e["target"] for e in self.edges.values() if e.get("relationship") == "supersedes"}
        superseded |= {k.split("|")[2] for k in self.edge_keys if k.split("|")[1] == "supersedes"}
        old = sorted(
            (n.get("last_activated", ""), nid)
            for nid, n in self.nodes.items()
            if n.get("kind") in ("decision", "correction")
        )
        ids = [nid for _, nid in old] + [
            nid for nid, v in self.added.items() if v["kind"] in ("decision", "correction")
        ]
        return [i for i in ids if i not in superseded]


def _superseded_by(p: _Proposal, sentence: str, new_id: str, mentioned: list[str]) -> str | None:
    """Which live decision a correction reverses: one naming a negated term, else overlap."""
    live = [d for d in p.decisions() if d != new_id]
    if not live:
        return None
    negated = [t.lower() for t in negated_terms(sentence)]
    for d in reversed(live):
        label = p.label_of(d).lower()
        if any(t and t in label for t in negated):
            return d
    words = keywords(sentence)
    best, best_overlap = None, 0
    for d in reversed(live):
        overlap = len(words & keywords(p.label_of(d)))
        if overlap > best_overlap:
            best, best_overlap = d, overlap
    if best:
        return best
    return live[-1] if has_correction(sentence) and has_decision(sentence) else None


def _has_positive(sentence: str) -> bool:
    return has_decision(sentence) or POSITIVE_RE.search(sentence) is not None


def _prompt(p: _Proposal, event: dict[str, Any], state: dict[str, Any]) -> None:
    text = event.get("text") or ""
    domain, _ = classify_domain(text)
    domain = domain or state.get("domain") or "project"
    state["domain"] = domain
    parts = sentences(text)
    joined: list[str] = []
    i = 0
    while i < len(parts):
        sent = parts[i]
        # "Actually, not Resend. Use Bento: ..." — a correction and its replacement.
        if has_correction(sent) and i + 1 < len(parts) and not _has_positive(sent):
            sent = f"{sent} {parts[i + 1]}"
            i += 1
        joined.append(sent)
        i += 1
    for sent in joined:
        correction, decision = has_correction(sent), has_decision(sent)
        names = [(label, kind) for label, kind in names_in(sent)]
        sdomain = classify_domain(sent)[0] or domain
        mentioned = [
            nid for label, kind in names if (nid := p.node(label, "technical" if kind == "symbol" else sdomain, kind))
        ]
        if correction and (decision or negated_terms(sent) or mentioned):
            gist = statement(sent)
            nid = p.node(gist, sdomain, "correction", summary=sent[:280])
            old = _superseded_by(p, sent, nid or "", mentioned) if nid else None
            if nid and old:
                p.edge(nid, "supersedes", old, 0.9)
                p.notes.append(f"correction {gist!r} supersedes {p.label_of(old)!r}")
            rejected = {slugify(t) for t in negated_terms(sent)}
            for m in mentioned:
                if m == old or p.kind_of(m) in ("decision", "correction"):
                    continue
                # "not Resend ... use Bento": Bento is decided, Resend is turned away from.
                turned_away = any(r == m or r.startswith(m + "-") or m.startswith(r + "-") for r in rejected)
                p.edge(nid, "contradicts" if turned_away else "decides", m, 0.7)
            if nid:
                state["topic"] = nid
        elif decision:
            gist = statement(sent)
            nid = p.node(gist, sdomain, "decision", summary=sent[:280])
            for m in mentioned:
                p.edge(nid, "decides", m, 0.7)
            if nid:
                p.notes.append(f"decision {gist!r}")
                state["topic"] = nid
        elif mentioned:
            state.setdefault("topic", mentioned[0])
            # Names mentioned together with the current topic inform it.
            topic = state.get("topic")
            for m in mentioned[:4]:
                if topic and m != topic:
                    p.edge(m, "informs", topic, 0.4)
    for path in event.get("paths", [])[:6]:
        fid = p.node(_file_label(path), "technical", "file")
        if fid and state.get("topic") and fid != state["topic"]:
            p.edge(state["topic"], "depends_on", fid, 0.5)


def _tool(p: _Proposal, event: dict[str, Any], state: dict[str, Any]) -> None:
    tool = event.get("tool") or ""
    text = event.get("text") or ""
    topic = state.get("topic")
    paths = event.get("paths", [])[:6]
    if tool in _EDIT_TOOLS:
        for path in paths[:3]:
            fid = p.node(_file_label(path), "technical", "file")
            p.edge(topic, "edits", fid, 0.6)
            state.setdefault("edited", []).append(fid)
        # Classes and functions the edit defines are names the session will talk about.
        for name in _DEFINED_RE.findall(text)[:3]:
            sid = p.node(name, "technical", "symbol")
            p.edge(topic, "edits", sid, 0.5)
    elif tool == "Bash":
        first = text.splitlines()[0][2:] if text.startswith("$ ") else text.split("\n", 1)[0]
        low = first.lower()
        if any(w in low for w in _TEST_WORDS):
            cid = p.node(first[:80], "technical", "command")
            for fid in state.get("edited", [])[-3:]:
                p.edge(cid, "tests", fid, 0.6)
            p.edge(cid, "tests", topic, 0.5)
        elif any(low.startswith(w) for w in _BUILD_WORDS):
            p.node(first[:80], "technical", "command")
    else:
        for path in paths[:2]:
            p.node(_file_label(path), "technical", "file")
    if event.get("error"):
        from ..gate import first_error_line

        line = first_error_line(text)
        if line:
            eid = p.node(line[:100], "technical", "error")
            p.edge(eid, "blocks", topic, 0.6)


class OfflineProbe:
    """Deterministic extractor; the default backend when no model is reachable."""

    name = "offline"

    def run(self, events: list[dict[str, Any]], doc: dict[str, Any]) -> ProbeResult:
        p = _Proposal(doc)
        focus = [
            f
            for f in doc.get("focus", [])
            if f in p.nodes and p.nodes[f].get("kind") not in ("file", "command", "error")
        ]
        live = p.decisions()
        state: dict[str, Any] = {"topic": live[-1] if live else (focus[0] if focus else None)}
        for event in events:
            if event.get("event") in ("UserPromptSubmit", "CompactSummary"):
                _prompt(p, event, state)
            elif event.get("event") == "PostToolUse":
                _tool(p, event, state)
        reasons = sorted({r for e in events for r in e.get("reasons", [])})
        rationale = (
            "; ".join(p.notes[:4]) or f"{len(p.added)} new, {len(p.activated)} activated from {len(events)} events"
        )
        if reasons:
            rationale = f"{rationale} (gate: {', '.join(reasons)})"
        return ProbeResult(backend=self.name, rationale=rationale[:500], patch=p.ops)
