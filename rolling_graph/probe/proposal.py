"""A proposal under construction: the RFC 6902 operations the offline probe will return.

The offline probe's extractors (prompts, assistant text, tool calls) write through one
:class:`Proposal`, which knows the graph as it was and what this batch has added, so a
name seen twice is one node, an existing node is activated once, and facts are merged
per node and emitted once, at :meth:`Proposal.finish`. Everything it proposes is still
validated by :mod:`rolling_graph.core.patch` (facts as ``trusted``: this is our own code).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rolling_graph.core.facts import allowed_keys
from rolling_graph.core.filepaths import file_id, file_label, is_harness_path, local_paths, posix_path, relativize
from rolling_graph.core.ids import name_id, slugify
from rolling_graph.core.model import DECISION_KINDS

if TYPE_CHECKING:
    from collections.abc import Mapping

    from rolling_graph.core.types import Confidence, Domain, Edge, Node, NodeKind, PendingEvent, SessionDoc, Verb

#: New nodes one probe may add (tool-heavy batches name many files and symbols).
MAX_NODES_PER_PROBE = 100
#: Stay under the validator's operation bound for trusted proposals (rolling_graph.core.patch).
MAX_OPS = 390


@dataclass
class FoldState:
    """Where the offline probe's fold of one batch stands: the node the batch is about
    (``topic``: the task in progress, else the live decision, the focus or the request), the
    task and request in force, the domain of the last statement, the files edited so far, and
    whether only what code states exactly is folded (``structural``)."""

    topic: str | None = None
    task: str | None = None
    request: str | None = None
    domain: Domain | None = None
    structural: bool = False
    edited: list[str] = field(default_factory=list)


_RANK = {"tool": 0, "assistant": 1, "user": 2}


def event_seq(event: PendingEvent) -> int | None:
    """The session event counter of an event id (``"e17"`` → 17)."""
    eid = event["id"]
    digits = eid[1:]
    return int(digits) if eid[:1] in ("e", "a") and digits.isdigit() else None


class Proposal:
    def __init__(self, doc: SessionDoc) -> None:
        self.nodes: dict[str, Node] = doc["nodes"]
        self.edges: dict[str, Edge] = doc["edges"]
        self.project = doc["project"]
        root = doc["gate"].get("root")
        #: The session's worktree top level (the gate's root): paths are keyed relative to it,
        #: so one file in two worktrees of the project is one node. Else the project root.
        self.root = root if root and root.startswith("/") else self.project
        self.ops: list[dict[str, Any]] = []
        self.added: dict[str, dict[str, Any]] = {}
        self.activated: set[str] = set()
        self.edge_keys: set[str] = set()
        self.notes: list[str] = []
        self._facts: dict[str, dict[str, Any]] = {}  # updates for nodes that existed before

    # -- reading ---------------------------------------------------------------------------
    def exists(self, nid: str) -> bool:
        return nid in self.nodes or nid in self.added

    def get(self, nid: str) -> Mapping[str, object]:
        """The node (as proposed, or as the graph holds it), or ``{}``."""
        return self.added.get(nid) or self.nodes.get(nid) or {}

    def label_of(self, nid: str) -> str:
        return str(self.get(nid).get("label", nid))

    def kind_of(self, nid: str) -> str:
        return str(self.get(nid).get("kind", ""))

    def fact(self, nid: str, key: str, default: Any = None) -> Any:
        if nid in self._facts and key in self._facts[nid]:
            return self._facts[nid][key]
        facts = self.get(nid).get("facts")
        return facts.get(key, default) if isinstance(facts, dict) else default

    def find(self, kind: NodeKind, **facts: Any) -> str | None:
        """The most recent node of ``kind`` whose facts match (added ones first)."""
        for pool in (self.added, self.nodes):
            hits = [
                nid for nid, n in pool.items()
                if n.get("kind") == kind and all(self.fact(nid, k) == v for k, v in facts.items())
            ]
            if hits:
                return max(hits, key=lambda nid: self.fact(nid, "seq") or 0)
        return None

    def of_kind(self, kind: NodeKind) -> list[str]:
        return [nid for nid, n in {**self.nodes, **self.added}.items() if n.get("kind") == kind]

    def full(self) -> bool:
        return len(self.ops) + len(self._facts) >= MAX_OPS

    # -- writing ---------------------------------------------------------------------------
    def node(
        self,
        label: str,
        domain: Domain,
        kind: NodeKind,
        summary: str | None = None,
        *,
        nid: str | None = None,
        activate: bool = True,
        confidence: Confidence | None = None,
    ) -> str | None:
        """The id of the node for ``label`` (added if new, activated once if it existed)."""
        nid = nid or (name_id(label) if kind == "symbol" else slugify(label))
        if self.exists(nid):
            if activate and nid in self.nodes and nid not in self.activated and not self.full():
                self.activated.add(nid)
                self.ops.append({"op": "replace", "path": f"/nodes/{nid}/weight", "value": 1.0})
            return nid
        if self.full() or len(self.added) >= MAX_NODES_PER_PROBE:
            return None
        value: dict[str, Any] = {"label": label, "domain": domain, "kind": kind}
        if summary:
            value["summary"] = summary
        if confidence:
            value["confidence"] = confidence
        elif kind in DECISION_KINDS:
            value["confidence"] = "correction" if kind == "correction" else "observed"
        self.added[nid] = value
        self.ops.append({"op": "add", "path": f"/nodes/{nid}", "value": value})
        return nid

    def path(self, path: str, cwd: str | None = None) -> str | None:
        """A path as the graph keys it (relative to the project root; a relative one taken
        from ``cwd``), or None for the harness's own files."""
        path = posix_path(path)
        if is_harness_path(path):
            return None
        if cwd and not path.startswith(("/", "~")):
            path = f"{cwd.rstrip('/')}/{path}"
        rel = relativize(path, self.root)
        return None if not rel or rel == "." or is_harness_path(rel) else rel

    def local(self, text: str) -> str:
        """``text`` (a command line, an error line) with the worktree's absolute paths made
        relative, so its node id is the same in every worktree and clone of the project."""
        return local_paths(text, self.root)

    def file(self, path: str) -> str | None:
        """The node of a file (a path as :meth:`path` gives it), its ``path`` fact set."""
        fid = self.node(file_label(path), "technical", "file", nid=file_id(path))
        if fid:
            self.set(fid, path=path[:300])
        return fid

    def known_file(self, path: str) -> str | None:
        """The file node a text means by ``path``: the file itself, or else, for a partial
        path (a directory and a name at least), the one file the graph knows whose path ends
        with it (``strategy/session.go`` said of ``cmd/entire/cli/strategy/session.go``).
        None when the graph knows no such file, or more than one."""
        if self.exists(fid := file_id(path)):
            return fid
        tail = "/" + path.lstrip("/")
        if path.startswith("../") or "/" not in tail[1:]:
            return None  # a bare name is ambiguous; a path outside the root is its own
        known = self.files_ending(tail)
        return known[0] if len(known) == 1 else None

    def files_ending(self, tail: str) -> list[str]:
        """The file nodes whose path ends with ``tail`` (``/session.go``; a path that is
        ``tail`` without its leading ``/`` too)."""
        return [nid for nid in self.of_kind("file") if ("/" + str(self.fact(nid, "path") or self.label_of(nid))).endswith(tail)]

    def mentioned_file(self, path: str) -> str | None:
        """The node of a file a prompt or a command names by ``path`` (as :meth:`path` gives
        it): the file the graph already knows by it (:meth:`known_file`, touched), else a new one."""
        known = self.known_file(path)
        if known and known != file_id(path):
            return self.node(self.label_of(known), "technical", "file", nid=known)
        return self.file(path)

    def relabel(self, nid: str, label: str) -> None:
        if nid in self.added:
            self.added[nid]["label"] = label
        elif nid in self.nodes and self.nodes[nid].get("label") != label and not self.full():
            self.ops.append({"op": "replace", "path": f"/nodes/{nid}/label", "value": label})

    def set(self, nid: str | None, **facts: Any) -> None:
        """Fold facts into a node (merged; emitted once per node, at :meth:`finish`). Only the
        facts its kind holds: a name that an earlier batch made another kind of node (a file
        name taken for an entity) keeps its kind and gets no fact the validator refuses."""
        if not nid or not self.exists(nid):
            return
        allowed = allowed_keys(self.kind_of(nid), trusted=True)
        facts = {k: v for k, v in facts.items() if k in allowed}
        if not facts:
            return
        if nid in self.added:
            self.added[nid].setdefault("facts", {}).update(facts)
            return
        changed = {k: v for k, v in facts.items() if self.fact(nid, k) != v}
        if changed and (nid in self._facts or not self.full()):
            self._facts.setdefault(nid, {}).update(changed)

    def by(self, nid: str | None, who: str, seq: int | None) -> None:
        """Record who brought a node in (``user`` outranks and is kept) and when."""
        if not nid:
            return
        facts: dict[str, Any] = {}
        if seq is not None and (self.fact(nid, "seq") or 0) < seq:
            facts["seq"] = seq
        if seq is not None and self.fact(nid, "first") is None:
            facts["first"] = seq  # the session's first event naming it (co-access direction)
        current = self.fact(nid, "by")
        # user outranks assistant outranks tool: a node keeps the strongest who named it
        if current != who and _RANK.get(who, 0) > _RANK.get(current, -1):
            facts["by"] = who
        if facts:
            self.set(nid, **facts)

    def edge(self, source: str | None, verb: Verb, target: str | None, strength: float = 0.6) -> None:
        if not source or not target or source == target or self.full():
            return
        if not self.exists(source) or not self.exists(target):
            return
        key = f"{source}|{verb}|{target}"
        if key in self.edge_keys:
            return
        self.edge_keys.add(key)
        if key in self.edges:
            self.ops.append({"op": "replace", "path": f"/edges/{key}/strength", "value": 1.0})
        else:
            self.ops.append(
                {"op": "add", "path": f"/edges/{key}", "value": {"source": source, "target": target, "relationship": verb, "strength": strength}}
            )

    def edge_exists(self, source: str, verb: Verb, target: str) -> bool:
        """Does the graph hold the edge, or has this proposal added it?"""
        key = f"{source}|{verb}|{target}"
        return key in self.edges or key in self.edge_keys

    def decisions(self) -> list[str]:
        """Live decisions (not superseded), oldest first, this batch's last."""
        superseded = {e["target"] for e in self.edges.values() if e.get("relationship") == "supersedes"}
        superseded |= {k.split("|")[2] for k in self.edge_keys if k.split("|")[1] == "supersedes"}
        old = sorted(
            (n.get("last_activated", ""), nid) for nid, n in self.nodes.items() if n.get("kind") in DECISION_KINDS
        )
        ids = [nid for _, nid in old] + [nid for nid, v in self.added.items() if v["kind"] in DECISION_KINDS]
        return [i for i in ids if i not in superseded]

    def finish(self) -> list[dict[str, Any]]:
        """The operations, with each existing node's fact updates as one op."""
        for nid, facts in self._facts.items():
            if facts:
                self.ops.append({"op": "add", "path": f"/nodes/{nid}/facts", "value": facts})
        self._facts = {}
        return self.ops
