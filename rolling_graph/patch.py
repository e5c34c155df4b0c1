"""Validation of probe proposals: untrusted RFC 6902 ops in, effective ops out.

A probe (a model, or the offline extractor) proposes operations against the sidecar
document. Nothing it says is trusted. :func:`validate_ops` either returns the *effective*
operations — concrete, deterministic, ready for :func:`rolling_graph.journal.apply_entry` —
or raises :class:`PatchRejected` with the reason, and then nothing is applied at all.

The rules (documented for the prompt in ``prompts/probe_v1.md``):

* at most :data:`MAX_OPS` operations; ``op`` is ``add``, ``replace``, ``remove`` or ``test``
* allowed paths only:
    - ``add /nodes/<id>`` with ``{label, domain, kind?, summary?, confidence?}``; the id is a
      slug (``[a-z0-9-]``, ≤ 64). Adding a node that exists activates it instead.
    - ``replace /nodes/<id>/label|summary|domain|kind`` on an existing node
    - ``replace|add /nodes/<id>/weight`` — a *signal*, not a value: higher than the current
      weight strengthens, lower weakens, by the deterministic rules in
      :mod:`rolling_graph.weights`
    - ``add /edges/<source|verb|target>`` with ``{source, target, relationship, strength?}``;
      the key must match the value, the verb must be in the vocabulary, both ends must
      exist (or be added earlier in the same patch), no self-loops. Re-adding strengthens.
    - ``replace /edges/<key>/strength`` (a signal, like weight); ``remove /edges/<key>``
      except ``supersedes`` edges, which are history and never removed
* nodes are never removed by a probe (weaken them instead); ``/focus``, ``/gate``,
  ``/ledger``, ``/counters`` and everything else are not the model's to touch
* weights and strengths must be numbers in 0..1; labels are 1..120 characters of text,
  control characters stripped; unknown fields inside a value are dropped
* a ``test`` op that fails rejects the whole patch
"""

from __future__ import annotations

import math
import re
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from .config import DecaySettings
from .model import (
    CONFIDENCE,
    DOMAINS,
    KINDS,
    LABEL_MAX,
    NODE_ID_RE,
    SOURCES_MAX,
    SUMMARY_MAX,
    VERBS,
    edge_key,
    iso,
    make_edge,
    make_node,
)
from .weights import INITIAL_WEIGHT, node_floor, round_w, strengthen, weaken

MAX_OPS = 80
MAX_NODES = 20_000
MAX_EDGES = 60_000
_CONTROL_RE = re.compile(r"[\x00-\x1f\x7f\u2028\u2029]")


class PatchRejected(ValueError):
    """The whole proposal is refused; ``str(exc)`` says why (journaled)."""


def clean_text(value: str, limit: int) -> str:
    text = _CONTROL_RE.sub(" ", value)
    text = " ".join(text.split())
    return text[:limit]


class NodeValue(BaseModel):
    model_config = ConfigDict(extra="ignore")
    label: str = Field(min_length=1)
    domain: str
    kind: str = "concept"
    summary: str | None = None
    confidence: str | None = None
    files: list[str] | None = None

    @field_validator("label")
    @classmethod
    def _label(cls, v: str) -> str:
        v = clean_text(v, LABEL_MAX)
        if not v:
            raise ValueError("empty label")
        return v

    @field_validator("summary")
    @classmethod
    def _summary(cls, v: str | None) -> str | None:
        return clean_text(v, SUMMARY_MAX) if v else None

    @field_validator("domain")
    @classmethod
    def _domain(cls, v: str) -> str:
        if v not in DOMAINS:
            raise ValueError(f"domain {v!r} not in {DOMAINS}")
        return v

    @field_validator("kind")
    @classmethod
    def _kind(cls, v: str) -> str:
        if v not in KINDS:
            raise ValueError(f"kind {v!r} not in {KINDS}")
        return v

    @field_validator("confidence")
    @classmethod
    def _confidence(cls, v: str | None) -> str | None:
        if v is not None and v not in CONFIDENCE:
            raise ValueError(f"confidence {v!r} not in {CONFIDENCE}")
        return v


class EdgeValue(BaseModel):
    model_config = ConfigDict(extra="ignore")
    source: str
    target: str
    relationship: str
    strength: float = 0.5

    @field_validator("relationship")
    @classmethod
    def _verb(cls, v: str) -> str:
        if v not in VERBS:
            raise ValueError(f"relationship {v!r} is not in the vocabulary {VERBS}")
        return v


def _unit(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value) or math.isinf(value):
        raise PatchRejected(f"{what} must be a number, got {value!r}")
    if not 0.0 <= value <= 1.0:
        raise PatchRejected(f"{what} {value!r} is outside 0..1")
    return float(value)


def _split(path: Any) -> list[str]:
    if not isinstance(path, str) or not path.startswith("/"):
        raise PatchRejected(f"path {path!r} is not a JSON Pointer")
    return [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]


class _Builder:
    """Accumulates effective ops against a working view of the graph."""

    def __init__(self, doc: dict[str, Any], now: datetime, settings: DecaySettings, source: str | None) -> None:
        self.nodes = {k: dict(v) for k, v in doc.get("nodes", {}).items()}
        self.edges = {k: dict(v) for k, v in doc.get("edges", {}).items()}
        self.now, self.settings, self.source = now, settings, source
        self.ops: list[dict[str, Any]] = []
        self.touched: list[str] = []

    def _set(self, nid: str, field: str, value: Any) -> None:
        self.nodes[nid][field] = value
        self.ops.append({"op": "replace", "path": f"/nodes/{nid}/{field}", "value": value})

    def activate(self, nid: str) -> None:
        node = self.nodes[nid]
        self._set(nid, "weight", round_w(strengthen(node.get("weight", 0.5), self.settings.activation_gain)))
        self._set(nid, "last_activated", iso(self.now))
        self._set(nid, "activations", int(node.get("activations", 0)) + 1)
        if self.source:
            sources = [s for s in node.get("sources", []) if s != self.source] + [self.source]
            self._set(nid, "sources", sources[-SOURCES_MAX:])
        self.touched.append(nid)

    def weaken(self, nid: str) -> None:
        node = self.nodes[nid]
        self._set(nid, "weight", round_w(weaken(node.get("weight", 0.5), self.settings.weaken_loss, node_floor(node, self.settings))))

    def add_node(self, nid: str, value: Any) -> None:
        if not NODE_ID_RE.match(nid):
            raise PatchRejected(f"node id {nid!r} is not a slug ([a-z0-9-], at most 64)")
        try:
            v = NodeValue.model_validate(value)
        except ValidationError as exc:
            raise PatchRejected(f"node {nid}: {exc.errors()[0]['msg']}") from exc
        if nid in self.nodes:
            self.activate(nid)
            if v.summary and v.summary != self.nodes[nid].get("summary"):
                self._set(nid, "summary", v.summary)
            return
        if len(self.nodes) >= MAX_NODES:
            raise PatchRejected(f"graph is at its size bound ({MAX_NODES} nodes)")
        confidence = v.confidence or ("correction" if v.kind == "correction" else "inferred")
        node = make_node(
            v.label, v.domain, v.kind, node_id=nid, weight=INITIAL_WEIGHT.get(v.kind, 0.5),
            now=self.now, confidence=confidence, summary=v.summary, source=self.source,
        )
        if v.files:
            node["files"] = [clean_text(f, 200) for f in v.files if isinstance(f, str)][:8]
        self.nodes[nid] = dict(node)
        self.ops.append({"op": "add", "path": f"/nodes/{nid}", "value": node})
        self.touched.append(nid)

    def replace_node_field(self, nid: str, field: str, value: Any) -> None:
        if nid not in self.nodes:
            raise PatchRejected(f"node {nid!r} does not exist")
        if field == "weight":
            signal = _unit(value, f"weight of {nid}")
            (self.activate if signal >= self.nodes[nid].get("weight", 0.0) else self.weaken)(nid)
            return
        current = {k: self.nodes[nid].get(k) for k in ("label", "domain", "kind")}
        current.update({field: value})
        try:
            v = NodeValue.model_validate({**current, "summary": value if field == "summary" else None})
        except ValidationError as exc:
            raise PatchRejected(f"node {nid}.{field}: {exc.errors()[0]['msg']}") from exc
        self._set(nid, field, getattr(v, field))

    def add_edge(self, key: str, value: Any) -> None:
        try:
            v = EdgeValue.model_validate(value)
        except ValidationError as exc:
            raise PatchRejected(f"edge {key}: {exc.errors()[0]['msg']}") from exc
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
        self.edges[key] = dict(edge)
        self.ops.append({"op": "add", "path": f"/edges/{key}", "value": edge})
        if v.relationship == "supersedes":
            # The newer decision leads; the older one stays, weakened, as history.
            self.weaken(v.target)
            if "superseded_by" not in self.nodes[v.target]:
                self.nodes[v.target]["superseded_by"] = v.source
                self.ops.append({"op": "add", "path": f"/nodes/{v.target}/superseded_by", "value": v.source})

    def signal_edge(self, key: str, signal: float) -> None:
        edge = self.edges[key]
        current = edge.get("strength", 0.5)
        new = strengthen(current, self.settings.activation_gain) if signal >= current else weaken(current, self.settings.weaken_loss)
        edge["strength"] = round_w(new)
        edge["last_activated"] = iso(self.now)
        self.ops.append({"op": "replace", "path": f"/edges/{key}/strength", "value": edge["strength"]})
        self.ops.append({"op": "replace", "path": f"/edges/{key}/last_activated", "value": edge["last_activated"]})

    def remove_edge(self, key: str) -> None:
        if key not in self.edges:
            raise PatchRejected(f"edge {key!r} does not exist")
        if self.edges[key].get("relationship") == "supersedes":
            raise PatchRejected(f"edge {key} is a supersedes edge: decision history is never removed")
        del self.edges[key]
        self.ops.append({"op": "remove", "path": f"/edges/{key}"})


def validate_ops(
    proposal: Any,
    doc: dict[str, Any],
    now: datetime,
    settings: DecaySettings | None = None,
    *,
    source: str | None = None,
) -> tuple[list[dict[str, Any]], list[str]]:
    """Validate a proposal against ``doc``; return ``(effective_ops, touched_node_ids)``.

    Raises :class:`PatchRejected` on the first violation: all or nothing.
    """
    settings = settings or DecaySettings()
    if not isinstance(proposal, list):
        raise PatchRejected("patch must be a list of operations")
    if len(proposal) > MAX_OPS:
        raise PatchRejected(f"patch has {len(proposal)} operations; the bound is {MAX_OPS}")
    b = _Builder(doc, now, settings, source)
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


def _test(b: _Builder, parts: list[str], value: Any) -> None:
    cur: Any = {"nodes": b.nodes, "edges": b.edges}
    for p in parts:
        if not isinstance(cur, dict) or p not in cur:
            raise PatchRejected("test failed: path does not exist")
        cur = cur[p]
    if cur != value:
        raise PatchRejected("test failed: value differs")
