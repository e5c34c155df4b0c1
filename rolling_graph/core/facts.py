"""Node facts: a small, bounded dict of per-kind facts (``node["facts"]``).

Facts are what a coding session's memory states precisely: how often a file was edited,
whether the last test run passed, whether an error is still open, a task's status. They
are folded from tool events by deterministic code (the offline probe's tool folding) and
validated here, key by key, before any reaches the graph:

* every key has a type and a bound (:data:`SPEC`); a kind admits only its own keys
  (:data:`KIND_KEYS`) plus the common ``seq`` (the event that last named the node),
  ``first`` (the event of the session that first named it), ``by`` and ``mentions``
* a model probe may state only a task's ``status``, a command's ``outcome`` and an error's
  ``state`` (:data:`MODEL_KEYS`): counts, paths and results are never a model's to write
* proposed facts are merged into the node's current facts (a key that is absent is kept)

Stdlib only; imported by the probe and patch validation, never by the hook.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rolling_graph.core.model import TASK_STATES

if TYPE_CHECKING:
    from rolling_graph.core.types import NodeFacts

#: key -> ("int", max) | ("str", max length) | ("enum", allowed values)
SPEC: dict[str, tuple[str, Any]] = {
    "path": ("str", 300),
    "edits": ("int", 1_000_000),
    "writes": ("int", 1_000_000),
    "reads": ("int", 1_000_000),
    "last_op": ("enum", ("edit", "write", "read")),
    "what": ("str", 120),
    "runs": ("int", 1_000_000),
    "outcome": ("enum", ("pass", "fail", None)),
    "result": ("str", 120),
    "state": ("enum", ("open", "resolved")),
    "status": ("enum", TASK_STATES),
    "ref": ("str", 40),
    "from": ("str", 80),
    "seq": ("int", 1_000_000_000),
    "first": ("int", 1_000_000_000),
    "by": ("enum", ("user", "assistant", "tool")),
    "mentions": ("int", 1_000_000),
    "removed": ("int", 1_000_000_000),
    "in": ("str", 200),
    "def": ("int", 1_000_000_000),
}

COMMON_KEYS = frozenset({"seq", "first", "by", "mentions"})
#: Keys each kind may carry besides :data:`COMMON_KEYS`. ``ref``: a task's tracker id (bd,
#: TaskCreate) or a command's background task id, a commit's short sha; ``from``: the
#: command family an error came from, so a later passing run resolves it; ``removed``: the
#: ``seq`` of the edit that took a code name out of the code (:func:`rolling_graph.render.rank.is_removed`);
#: ``in``: the id of the file node whose edit or write last used a code name (its owner in
#: the restore block's map of names); ``def``: the ``seq`` of an edit or write whose code
#: defined it (the session's own name, not a call into a library).
KIND_KEYS: dict[str, frozenset[str]] = {
    "symbol": frozenset({"removed", "in", "def"}),
    "file": frozenset({"path", "edits", "writes", "reads", "last_op", "what"}),
    "command": frozenset({"runs", "outcome", "result", "ref"}),
    "error": frozenset({"state", "from"}),
    "task": frozenset({"status", "ref"}),
    "commit": frozenset({"ref"}),
}
#: What a model probe may state.
MODEL_KEYS: dict[str, frozenset[str]] = {
    "task": frozenset({"status"}),
    "command": frozenset({"outcome"}),
    "error": frozenset({"state"}),
}
MAX_KEYS = 12


class FactsRejected(ValueError):
    """A proposed fact is not allowed or not well-formed; ``str(exc)`` says which."""


def allowed_keys(kind: str, trusted: bool) -> frozenset[str]:
    if trusted:
        return KIND_KEYS.get(kind, frozenset()) | COMMON_KEYS
    return MODEL_KEYS.get(kind, frozenset())


def clean_value(key: str, value: Any) -> Any:
    """``value`` checked against the key's spec (text is made one line and cut to bound)."""
    kind, bound = SPEC[key]
    if kind == "int":
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= bound:
            raise FactsRejected(f"fact {key} must be an integer in 0..{bound}, got {value!r}")
        return value
    if kind == "enum":
        if value not in bound:
            raise FactsRejected(f"fact {key} must be one of {bound}, got {value!r}")
        return value
    if not isinstance(value, str):
        raise FactsRejected(f"fact {key} must be text, got {type(value).__name__}")
    text = " ".join("".join(" " if ord(c) < 32 or c in "\x7f\u2028\u2029" else c for c in value).split())
    return text[:bound]


def clean_facts(kind: str, value: Any, *, trusted: bool) -> NodeFacts:
    """Validated facts for a node of ``kind``; :class:`FactsRejected` on any bad key."""
    if not isinstance(value, dict):
        raise FactsRejected("facts must be an object")
    if len(value) > MAX_KEYS:
        raise FactsRejected(f"at most {MAX_KEYS} facts")
    allowed = allowed_keys(kind, trusted)
    out: NodeFacts = {}
    for key, item in value.items():
        if key not in allowed:
            why = "is written by deterministic code only" if key in SPEC else "is not a known fact"
            raise FactsRejected(f"fact {key!r} on a {kind} node {why}")
        out[key] = clean_value(key, item)  # type: ignore[literal-required]  # a key of SPEC
    return out


def merged(current: NodeFacts | None, update: NodeFacts) -> NodeFacts:
    """The node's facts after ``update`` (absent keys kept)."""
    base: NodeFacts = {**current} if current else {}
    base.update(update)
    return base
