"""Validation of probe proposals: untrusted RFC 6902 ops in, effective ops out.

A probe (a model, or the offline extractor) proposes operations against the sidecar
document. Nothing it says is trusted. :func:`validate_ops` either returns the *effective*
operations — concrete, deterministic, ready for :func:`rolling_graph.store.journal.apply_entry` —
or raises :class:`PatchRejected` with the reason, and then nothing is applied at all.

The rules (documented for the prompt in ``prompts/probe_v2.md``):

* at most :data:`MAX_OPS` operations; ``op`` is ``add``, ``replace``, ``remove`` or ``test``
* allowed paths only:
    - ``add /nodes/<id>`` with ``{label, domain, kind?, summary?, confidence?}``; the id is a
      slug (``[a-z0-9-]``, ≤ 64). Adding a node that exists activates it instead.
    - ``replace /nodes/<id>/label|summary|domain|kind`` on an existing node
    - ``add|replace /nodes/<id>/facts`` (or ``.../facts/<key>``) and ``facts`` inside an added
      node: bounded per-kind facts (:mod:`rolling_graph.core.facts`), merged into the node's
      current facts. A model may state only a task's ``status``, a command's ``outcome`` and
      an error's ``state``; the other facts (counts, paths, results) come from the offline
      probe's deterministic folding of tool events (``trusted=True``)
    - ``replace|add /nodes/<id>/weight`` — a *signal*, not a value: higher than the current
      weight strengthens, lower weakens, by the deterministic rules in
      :mod:`rolling_graph.core.weights`
    - ``add /edges/<source|verb|target>`` with ``{source, target, relationship, strength?}``;
      the key must match the value, the verb must be in the vocabulary, both ends must
      exist (or be added earlier in the same patch), no self-loops. Re-adding strengthens.
    - ``replace /edges/<key>/strength`` (a signal, like weight); ``remove /edges/<key>``
      except ``supersedes`` edges, which are history and never removed
* nodes are never removed by a probe (weaken them instead); ``/focus``, ``/gate``,
  ``/ledger``, ``/counters`` and everything else are not the model's to touch
* weights and strengths must be numbers in 0..1; labels are 1..120 characters of text,
  control and invisible characters stripped (:mod:`rolling_graph.safety.sanitize`); unknown
  fields inside a value are dropped
* a ``test`` op that fails rejects the whole patch
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar

from rolling_graph.core.clock import iso
from rolling_graph.core.config import DecaySettings
from rolling_graph.core.facts import FactsRejected, clean_facts, merged
from rolling_graph.core.ids import edge_key, is_node_id, pointer_parts
from rolling_graph.core.model import (
    CONFIDENCE,
    DOMAINS,
    KINDS,
    LABEL_MAX,
    SOURCES_MAX,
    SUMMARY_MAX,
    VERBS,
    make_edge,
    make_node,
)
from rolling_graph.core.weights import INITIAL_WEIGHT, node_floor, round_w, strengthen, weaken
from rolling_graph.safety.sanitize import clean_line

if TYPE_CHECKING:
    from rolling_graph.core.types import Edge, GraphDoc, Node, NodeFacts, NodeField, PatchOp

MAX_OPS = 80
#: The bound for trusted proposals (the offline probe folds every tool call of a batch).
MAX_OPS_TRUSTED = 400
MAX_NODES = 20_000
MAX_EDGES = 60_000


class PatchRejected(ValueError):
    """The whole proposal is refused; ``str(exc)`` says why (journaled)."""


class NodeValue:
    """A proposed node: ``{label, domain, kind?, summary?, confidence?, files?, facts?}``.

    Plain checks rather than a pydantic model: the probe runs as its own short process
    (a few per session, on the user's machine), and importing pydantic there cost 140 ms
    of CPU per probe, which a 2-core laptop feels in the session it is observing.
    Unknown fields are dropped.
    """

    __slots__ = ("label", "domain", "kind", "summary", "confidence", "files", "facts")

    def __init__(self, value: object) -> None:
        if not isinstance(value, dict):
            raise PatchRejected("node value must be an object")
        label = value.get("label")
        if not isinstance(label, str) or not clean_line(label, LABEL_MAX):
            raise PatchRejected("label must be non-empty text")
        self.label = clean_line(label, LABEL_MAX)
        self.domain = _choice(value.get("domain"), DOMAINS, "domain")
        self.kind = _choice(value.get("kind", "concept"), KINDS, "kind")
        summary = value.get("summary")
        if summary is not None and not isinstance(summary, str):
            raise PatchRejected("summary must be text")
        self.summary = clean_line(summary, SUMMARY_MAX) if summary else None
        confidence = value.get("confidence")
        self.confidence = None if confidence is None else _choice(confidence, CONFIDENCE, "confidence")
        files = value.get("files")
        if files is not None and not isinstance(files, list):
            raise PatchRejected("files must be a list")
        self.files = files
        self.facts = value.get("facts")  # checked against the kind by the builder


class EdgeValue:
    """A proposed edge: ``{source, target, relationship, strength?}``."""

    __slots__ = ("source", "target", "relationship", "strength")

    def __init__(self, value: object) -> None:
        if not isinstance(value, dict):
            raise PatchRejected("edge value must be an object")
        for key in ("source", "target"):
            if not isinstance(value.get(key), str):
                raise PatchRejected(f"edge {key} must be a node id")
        self.source, self.target = value["source"], value["target"]
        verb = value.get("relationship")
        if not isinstance(verb, str) or verb not in VERBS:
            raise PatchRejected(f"relationship {verb!r} is not in the vocabulary {VERBS}")
        self.relationship = verb
        self.strength = value.get("strength", 0.5)


_Word = TypeVar("_Word", bound=str)


def _choice(value: object, allowed: tuple[_Word, ...], what: str) -> _Word:
    if not isinstance(value, str) or value not in allowed:
        raise PatchRejected(f"{what} {value!r} not in {allowed}")
    return value


def _unit(value: object, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value) or math.isinf(value):
        raise PatchRejected(f"{what} must be a number, got {value!r}")
    if not 0.0 <= value <= 1.0:
        raise PatchRejected(f"{what} {value!r} is outside 0..1")
    return float(value)


def _split(path: object) -> list[str]:
    parts = pointer_parts(path)
    if not parts:
        raise PatchRejected(f"path {path!r} is not a JSON Pointer")
    return parts


#: The node fields ``replace /nodes/<id>/<field>`` may set (``weight`` is a signal).
_TEXT_FIELDS: dict[str, NodeField] = {"label": "label", "summary": "summary", "domain": "domain", "kind": "kind"}


class _Builder:
    """Accumulates effective ops against a working view of the graph."""

    def __init__(self, doc: GraphDoc, now: datetime, settings: DecaySettings, source: str | None, trusted: bool = False) -> None:
        self.nodes: dict[str, Node] = {k: v.copy() for k, v in doc["nodes"].items()}
        self.edges: dict[str, Edge] = {k: v.copy() for k, v in doc["edges"].items()}
        self.now, self.settings, self.source, self.trusted = now, settings, source, trusted
        self.ops: list[PatchOp] = []
        self.touched: list[str] = []

    def _set(self, nid: str, field: NodeField, value: Any) -> None:
        self.nodes[nid][field] = value
        self.ops.append({"op": "replace", "path": f"/nodes/{nid}/{field}", "value": value})

    def activate(self, nid: str) -> None:
        node = self.nodes[nid]
        self._set(nid, "weight", round_w(strengthen(node["weight"], self.settings.activation_gain)))
        self._set(nid, "last_activated", iso(self.now))
        self._set(nid, "activations", node["activations"] + 1)
        if self.source:
            sources = [s for s in node["sources"] if s != self.source] + [self.source]
            self._set(nid, "sources", sources[-SOURCES_MAX:])
        self.touched.append(nid)

    def weaken(self, nid: str) -> None:
        node = self.nodes[nid]
        self._set(nid, "weight", round_w(weaken(node["weight"], self.settings.weaken_loss, node_floor(node, self.settings))))

    def add_node(self, nid: str, value: object) -> None:
        if not is_node_id(nid):
            raise PatchRejected(f"node id {nid!r} is not a slug ([a-z0-9-], at most 64)")
        try:
            v = NodeValue(value)
        except PatchRejected as exc:
            raise PatchRejected(f"node {nid}: {exc}") from None
        if nid in self.nodes:
            self.activate(nid)
            if v.summary and v.summary != self.nodes[nid].get("summary"):
                self._set(nid, "summary", v.summary)
            if v.facts is not None:
                self.set_facts(nid, v.facts)
            return
        if len(self.nodes) >= MAX_NODES:
            raise PatchRejected(f"graph is at its size bound ({MAX_NODES} nodes)")
        confidence = v.confidence or ("correction" if v.kind == "correction" else "inferred")
        node = make_node(
            v.label, v.domain, v.kind, node_id=nid, weight=INITIAL_WEIGHT.get(v.kind, 0.5),
            now=self.now, confidence=confidence, summary=v.summary, source=self.source,
        )
        if v.files:
            node["files"] = [clean_line(f, 200) for f in v.files if isinstance(f, str)][:8]
        if v.facts is not None:
            facts = self._facts(v.kind, v.facts)
            if facts:
                node["facts"] = facts
        self.nodes[nid] = node.copy()
        self.ops.append({"op": "add", "path": f"/nodes/{nid}", "value": node})
        self.touched.append(nid)

    def _facts(self, kind: str, value: object) -> NodeFacts:
        try:
            return clean_facts(kind, value, trusted=self.trusted)
        except FactsRejected as exc:
            raise PatchRejected(str(exc)) from None

    def set_facts(self, nid: str, value: object) -> None:
        """Merge validated facts into an existing node (one effective op: the whole dict)."""
        if nid not in self.nodes:
            raise PatchRejected(f"node {nid!r} does not exist")
        node = self.nodes[nid]
        facts = merged(node.get("facts"), self._facts(node["kind"], value))
        if facts != node.get("facts"):
            node["facts"] = facts
            self.ops.append({"op": "add", "path": f"/nodes/{nid}/facts", "value": facts})

    def replace_node_field(self, nid: str, field: str, value: object) -> None:
        if nid not in self.nodes:
            raise PatchRejected(f"node {nid!r} does not exist")
        if field == "weight":
            signal = _unit(value, f"weight of {nid}")
            (self.activate if signal >= self.nodes[nid]["weight"] else self.weaken)(nid)
            return
        node = self.nodes[nid]
        current: dict[str, object] = {"label": node["label"], "domain": node["domain"], "kind": node["kind"]}
        current.update({field: value})
        try:
            v = NodeValue({**current, "summary": value if field == "summary" else None})
        except PatchRejected as exc:
            raise PatchRejected(f"node {nid}.{field}: {exc}") from None
        self._set(nid, _TEXT_FIELDS[field], getattr(v, field))

    def add_edge(self, key: str, value: object) -> None:
        try:
            v = EdgeValue(value)
        except PatchRejected as exc:
            raise PatchRejected(f"edge {key}: {exc}") from None
        strength = _unit(v.strength, f"strength of {key}")
        if key != edge_key(v.source, v.relationship, v.target):
            raise PatchRejected(f"edge key {key!r} does not match its value")
        for end in (v.source, v.target):
            if end not in self.nodes:
                raise PatchRejected(f"edge {key}: node {end!r} does not exist")
        if v.source == v.target:
            raise PatchRejected(f"edge {key} is a self-loop")
        if key in self.edges:
            self.signal_edge(key, 1.0)
            return
        if len(self.edges) >= MAX_EDGES:
            raise PatchRejected(f"graph is at its size bound ({MAX_EDGES} edges)")
        edge = make_edge(v.source, v.relationship, v.target, round_w(strength), now=self.now)
        self.edges[key] = edge.copy()
        self.ops.append({"op": "add", "path": f"/edges/{key}", "value": edge})
        if v.relationship == "supersedes":
            # The newer decision leads; the older one stays, weakened, as history.
            self.weaken(v.target)
            if "superseded_by" not in self.nodes[v.target]:
                self.nodes[v.target]["superseded_by"] = v.source
                self.ops.append({"op": "add", "path": f"/nodes/{v.target}/superseded_by", "value": v.source})

    def signal_edge(self, key: str, signal: float) -> None:
        edge = self.edges[key]
        current = edge["strength"]
        new = strengthen(current, self.settings.activation_gain) if signal >= current else weaken(current, self.settings.weaken_loss)
        edge["strength"] = round_w(new)
        edge["last_activated"] = iso(self.now)
        self.ops.append({"op": "replace", "path": f"/edges/{key}/strength", "value": edge["strength"]})
        self.ops.append({"op": "replace", "path": f"/edges/{key}/last_activated", "value": edge["last_activated"]})

    def remove_edge(self, key: str) -> None:
        if key not in self.edges:
            raise PatchRejected(f"edge {key!r} does not exist")
        if self.edges[key]["relationship"] == "supersedes":
            raise PatchRejected(f"edge {key} is a supersedes edge: decision history is never removed")
        del self.edges[key]
        self.ops.append({"op": "remove", "path": f"/edges/{key}"})


def validate_ops(
    proposal: object,
    doc: GraphDoc,
    now: datetime,
    settings: DecaySettings | None = None,
    *,
    source: str | None = None,
    trusted: bool = False,
) -> tuple[list[PatchOp], list[str]]:
    """Validate a proposal against ``doc``; return ``(effective_ops, touched_node_ids)``.

    ``trusted``: the proposal comes from deterministic code (the offline probe), which may
    write every fact of :mod:`rolling_graph.core.facts`; a model may write only a few.
    Raises :class:`PatchRejected` on the first violation: all or nothing.
    """
    settings = settings or DecaySettings()
    if not isinstance(proposal, list):
        raise PatchRejected("patch must be a list of operations")
    limit = MAX_OPS_TRUSTED if trusted else MAX_OPS
    if len(proposal) > limit:
        raise PatchRejected(f"patch has {len(proposal)} operations; the bound is {limit}")
    b = _Builder(doc, now, settings, source, trusted)
    for i, op in enumerate(proposal):
        if not isinstance(op, dict):
            raise PatchRejected(f"operation {i} is not an object")
        kind = op.get("op")
        parts = _split(op.get("path"))
        where = f"operation {i} ({kind} {op.get('path')})"
        if kind not in ("add", "replace", "remove", "test"):
            raise PatchRejected(f"{where}: op {kind!r} is not allowed")
        if kind in ("add", "replace", "test") and "value" not in op:
            raise PatchRejected(f"{where}: missing value")
        value = op.get("value")
        try:
            if kind == "test":
                _test(b, parts, value)
            elif parts[0] == "nodes" and len(parts) == 2 and kind == "add":
                b.add_node(parts[1], value)
            elif parts[0] == "nodes" and len(parts) == 3 and kind in ("add", "replace") and parts[2] in ("label", "summary", "domain", "kind", "weight"):
                b.replace_node_field(parts[1], parts[2], value)
            elif parts[0] == "nodes" and len(parts) in (3, 4) and parts[2] == "facts" and kind in ("add", "replace"):
                b.set_facts(parts[1], value if len(parts) == 3 else {parts[3]: value})
            elif parts[0] == "edges" and len(parts) == 2 and kind == "add":
                b.add_edge(parts[1], value)
            elif parts[0] == "edges" and len(parts) == 2 and kind == "remove":
                b.remove_edge(parts[1])
            elif parts[0] == "edges" and len(parts) == 3 and parts[2] == "strength" and kind in ("add", "replace"):
                if parts[1] not in b.edges:
                    raise PatchRejected(f"edge {parts[1]!r} does not exist")
                b.signal_edge(parts[1], _unit(value, f"strength of {parts[1]}"))
            else:
                raise PatchRejected("path is not one a probe may change")
        except PatchRejected as exc:
            raise PatchRejected(f"{where}: {exc}") from None
    return b.ops, list(dict.fromkeys(b.touched))


def _test(b: _Builder, parts: list[str], value: object) -> None:
    cur: object = {"nodes": b.nodes, "edges": b.edges}
    for p in parts:
        if not isinstance(cur, dict) or p not in cur:
            raise PatchRejected("test failed: path does not exist")
        cur = cur[p]
    if cur != value:
        raise PatchRejected("test failed: value differs")
