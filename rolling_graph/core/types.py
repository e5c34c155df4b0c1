"""The declared shapes of a session's files: for the type checker, never imported at run time.

Every module imports these names under ``if TYPE_CHECKING:`` only (the hook process never
loads this module, nor :mod:`typing` through it). At run time a node is a plain ``dict``
parsed from JSON; :func:`rolling_graph.core.normalize.normalize_graph` and
:func:`rolling_graph.core.normalize.normalize_state` make it match these shapes once, when a file
is loaded, and every reader after that trusts them (``node["weight"]``, not
``node.get("weight", some_default)``).

The files of a session (``$ROLLING_GRAPH_HOME/sessions/``, see :mod:`rolling_graph.store.sidecar`):

* ``<sid>.graph.json``    — :class:`GraphDoc`: nodes, edges, focus, journal position
* ``<sid>.state.json``    — :class:`HookState`: gate, ledger, counters (the hook's own)
* ``<sid>.index.json``    — :class:`HookIndex`: what the hook needs without the graph
* ``<sid>.tool-index.json`` — :class:`ToolIndex`: the part of it a tool result reads
* ``<sid>.journal.jsonl`` — one :class:`JournalEntry` a line

Code that holds a whole session (graph and state together) holds a :class:`SessionDoc`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal, NotRequired, Protocol, TypedDict

# -- the graph ------------------------------------------------------------------------------

#: What part of life a node belongs to (``rolling_graph.core.model.DOMAINS``).
Domain = Literal["relationship", "project", "technical", "personal"]
#: What a node stands for (``rolling_graph.core.model.KINDS``, where each is explained).
NodeKind = Literal["concept", "entity", "file", "symbol", "command", "error", "decision", "correction", "preference", "summary",
                   "request", "task", "commit"]
#: The fixed edge vocabulary (``rolling_graph.core.model.VERBS``): there is no generic ``related_to``.
Verb = Literal["blocks", "informs", "contradicts", "extends", "supersedes", "depends_on", "edits", "tests", "decides"]
#: How we came to hold a node (``rolling_graph.core.model.CONFIDENCE``); corrections outrank everything.
Confidence = Literal["asserted", "inferred", "observed", "correction"]


#: A node's facts: a small, bounded dict of per-kind facts, written only by deterministic code
#: (the offline probe's event folding, patch validation), never free-form from a model. Which
#: kind carries which, and each key's bound: ``rolling_graph.core.facts.SPEC`` and ``KIND_KEYS``.
NodeFacts = TypedDict(
    "NodeFacts",
    {
        "path": str,  # file: relative to the worktree top level
        "edits": int,
        "writes": int,
        "reads": int,
        "last_op": str,  # "edit" | "write" | "read"
        "what": str,  # ≤ 120 characters: e.g. the names edited
        "runs": int,  # command
        "outcome": str | None,  # "pass" | "fail" | None
        "result": str,  # ≤ 120 characters
        "state": str,  # error: "open" | "resolved"
        "from": str,  # error: the command family it came from
        "status": str,  # task: "pending" | "in_progress" | "completed" | "dropped"
        "ref": str,  # task: tracker id; command: background task id; commit: short sha
        "seq": int,  # any kind: the session's event counter at the last touch
        "first": int,  # any kind: the session's event counter at the first touch (session only)
        "by": str,  # any kind: "user" | "assistant" | "tool"
        "mentions": int,  # any kind: how many events' inputs named it
        "removed": int,  # symbol: the seq of the edit that took it out of the code
        "in": str,  # symbol: the file node whose edit or write last used it (its owner)
        "def": int,  # symbol: the seq of an edit or write whose code defined it
    },
    total=False,
)
#: The facts that are counts.
FactIntKey = Literal["edits", "writes", "reads", "runs", "seq", "mentions"]


class Node(TypedDict):
    """One node of the hot graph, keyed by its slug id in ``GraphDoc["nodes"]``."""

    id: str
    label: str  # ≤ LABEL_MAX characters of text
    domain: Domain
    kind: NodeKind
    weight: float  # 0..1; deterministic arithmetic (rolling_graph.core.weights) decides it
    last_activated: str  # ISO 8601, UTC
    first_seen: str
    activations: int
    anchor: bool
    floor: float  # the weight an anchor never falls below
    confidence: Confidence
    sources: list[str]  # event ids, bounded (SOURCES_MAX); the journal keeps the rest
    summary: NotRequired[str]
    files: NotRequired[list[str]]  # paths a decision is about (bounded)
    superseded_by: NotRequired[str]  # the newer node of a ``supersedes`` edge
    pulled: NotRequired[bool]  # brought in from the warm graph
    origin: NotRequired[str]  # "warm" for pulled nodes
    seen_at: NotRequired[str]  # a pulled node: when an earlier session last touched it (ISO 8601, UTC)
    seen_in: NotRequired[list[str]]  # a pulled node: the earlier sessions that touched it, latest first (bounded)
    sessions: NotRequired[int]  # a warm-graph document's node: how many sessions saw it
    facts: NotRequired[NodeFacts]


#: The node fields a patch writes one at a time.
NodeField = Literal["label", "summary", "domain", "kind", "weight", "last_activated", "activations", "sources"]


class Edge(TypedDict):
    """One edge, keyed ``source|relationship|target`` in ``GraphDoc["edges"]``."""

    source: str
    target: str
    relationship: Verb
    strength: float  # 0..1
    last_activated: str


class GraphDoc(TypedDict):
    """``<sid>.graph.json``: the graph, changed only through the journal."""

    version: int
    session_id: str
    project: str | None
    created_at: str
    updated_at: str
    nodes: dict[str, Node]
    edges: dict[str, Edge]
    focus: list[str]  # 3–5 node ids, recomputed by code after every journal entry
    journal_seq: int  # seq of the last journal entry applied
    journal_bytes: NotRequired[int]  # journal size the graph reflects (roll forward past it)
    last_decay_at: NotRequired[str]
    damage: NotRequired[list[str]]  # what a rebuild from a damaged journal lost (rolling_graph.store.shape)


# -- the hook's state -----------------------------------------------------------------------


class EditPair(TypedDict):
    """One change of a MultiEdit, each side cut to a bound (``…`` where it was cut)."""

    old: str
    new: str


class ToolData(TypedDict, total=False):
    """``PendingEvent["data"]``: the structured fields of one tool call, bounded
    (:meth:`rolling_graph.capture.tools.ToolCall.data`); empty values are left out. Which
    tool gives which key is said beside it; the probe adds ``names`` and ``mentions``."""

    old: str  # Edit: the code replaced (≤ 600 characters)
    new: str  # Edit, Write, NotebookEdit: the new code (≤ 600; a Write's ≤ 1,500)
    edits: list[EditPair]  # MultiEdit: its first edits
    pattern: str  # Grep, Glob
    glob: str  # Grep, Glob
    hits: int  # Grep, Glob: files (or matches, or lines) found
    cmd: str  # Bash: the command line
    desc: str  # Bash, Task/Agent, TaskOutput: the description
    bg: str  # Bash: a background run's task id ("?" when it has none)
    todos: list[list[str]]  # TodoWrite: [content, status] items
    subject: str  # TaskCreate, TaskUpdate
    ref: str  # TaskCreate, TaskUpdate, TaskOutput: the task's id
    status: str  # TaskUpdate, TaskOutput
    qa: list[list[str]]  # AskUserQuestion: [header, question, answer] of each answer
    plan: str  # ExitPlanMode: the plan the user approved
    agent: str  # Task/Agent: the subagent's type
    prompt: str  # Task/Agent: the brief
    out: str  # TaskOutput: the end of the task's output
    exit: int  # TaskOutput: the task's exit code
    failed: bool  # any tool: the result reports a failure
    names: list[str]  # an edit: code names of its whole input (the probe's, from the transcript)
    mentions: list[str]  # an edit: every code name its whole input uses ("-name": only the replaced code has it)
    values: list[str]  # any other tool (an MCP server's, WebSearch): its input's string values, bounded


class PendingEvent(TypedDict):
    """A hook event waiting for the probe (``GateState["pending"]``), bounded text."""

    id: str  # "e17": the session's event counter
    event: str  # "UserPromptSubmit" | "PostToolUse" | "CompactSummary"
    at: str
    text: str
    tool: str | None
    paths: list[str]
    error: bool
    reasons: list[str]  # why the gate fired on it (empty: it did not)
    paths_from_text: NotRequired[bool]  # a compaction summary: paths are found by the probe
    subagent: NotRequired[bool]  # a tool a subagent called (the payload's agent_id)
    data: NotRequired[ToolData]  # a tool's structured fields
    cwd: NotRequired[str]  # the payload's cwd (relative to the session root once settled)
    transcript: NotRequired[str]  # the payload's transcript path (moved to the gate state)


class GateState(TypedDict):
    events_since_probe: int
    last_domain: str | None
    pending: list[PendingEvent]  # bounded (gate.PENDING_MAX)
    pending_reasons: list[str]
    probe_requested: bool
    seen: NotRequired[list[str]]  # unseen names already counted since the last probe
    unseen_paths: NotRequired[int]
    dropped: NotRequired[int]  # events dropped past the overflow file's byte bound (journaled by the next probe)
    spilled: NotRequired[list[PendingEvent]]  # past the queue's bound: bound for the overflow file (never saved here)
    inflight: NotRequired[list[PendingEvent]]  # the batch a running probe holds
    inflight_from: NotRequired[int]  # journal size when it was taken (a retake reads from there)
    damage: NotRequired[list[str]]  # what a repair of a wrong-shaped state file lost (rolling_graph.store.shape)
    batch_reasons: NotRequired[list[str]]
    root: NotRequired[str]  # the session's root: the git top level of its first cwd
    transcript: NotRequired[str]  # the session's transcript path
    transcript_for: NotRequired[str]  # the transcript that ``transcript_offset`` is in
    transcript_offset: NotRequired[int]  # how far the probe has read the assistant's text


class Ledger(TypedDict):
    """What the conversation has been told (:mod:`rolling_graph.core.ledger`)."""

    told: dict[str, str]  # node id → fingerprint of what was shown
    seq: int  # the journal seq up to which the ledger has looked (-1: never)
    owed: list[str]  # news that did not fit a budget, most important first


class Counters(TypedDict):
    """Telemetry, rewritten by the hook and the probe; ``rgraph stats`` reads it."""

    events: int
    prompts: int
    tool_events: int
    gate_fired: int
    gate_reasons: dict[str, int]
    probes: int
    probes_by_backend: dict[str, int]
    probe_tokens_in: int
    probe_tokens_out: int
    patches_rejected: int
    injections: int
    injected_tokens: int
    last_injection_tokens: NotRequired[int]
    cap_notice_pending: NotRequired[str]  # a one-time notice that the probe budget ran out
    cap_notice_given: NotRequired[bool]
    notes_told: NotRequired[list[str]]  # files whose tool-time note was considered (rolling_graph.render.notes)
    notes_touched: NotRequired[list[str]]  # files this session's tool events touched
    note_chars: NotRequired[int]  # characters of tool-time notes so far
    named_restored: NotRequired[list[str]]  # nodes a prompt named and got restored (once; rolling_graph.render.inject)


class HookState(TypedDict):
    """``<sid>.state.json``: the hook's volatile state, apart from the graph."""

    gate: GateState
    ledger: Ledger
    counters: Counters


class SessionDoc(GraphDoc):
    """A whole session in memory: the graph and the hook's state together."""

    gate: GateState
    ledger: Ledger
    counters: Counters


# -- the journal ----------------------------------------------------------------------------

#: One RFC 6902 operation; ``value`` is any JSON value (a node, an edge, a number, ...).
PatchOp = TypedDict("PatchOp", {"op": str, "path": str, "value": NotRequired[Any], "from": NotRequired[str]})


class ForgetRecord(TypedDict):
    """The nodes and edges a ``forget`` entry removed, as they were (for ``unforget``)."""

    nodes: dict[str, Node]
    edges: dict[str, Edge]


class JournalEntry(TypedDict, total=False):
    """One line of ``<sid>.journal.jsonl`` (:mod:`rolling_graph.store.journal`). ``seq`` and
    ``at`` are filled in by ``SidecarStore.commit_entry``; read entries always have them."""

    seq: int
    at: str
    session_id: str
    project: str | None  # on the first (init) entry
    kind: str  # init, patch, rejected, activate, resume, pull, seed, note, forget, unforget
    rationale: str
    reasons: list[str]
    ops: list[PatchOp]
    decay_at: str
    event_id: str | None
    event_ids: list[str]
    backend: str | None
    model: str | None
    selected_because: str
    input_tokens: int
    output_tokens: int
    #: A model call that failed before this answer (offline) was made: what it cost.
    failed_backend: str
    failed_model: str | None
    failed_tokens_in: int
    failed_tokens_out: int
    fallback_reason: str
    touched: list[str]
    error: str  # why a proposal was rejected
    removed: ForgetRecord  # forget: what its ops removed, as it was (data, never applied)
    purged: bool  # forget --purge: the text was erased everywhere; nothing kept to put back


# -- the hook index -------------------------------------------------------------------------


class HookIndex(TypedDict):
    """``<sid>.index.json`` (:mod:`rolling_graph.store.index`): derived from the graph. Its nodes
    are columns (lists of one length, in graph order): a few lists parse in half the time
    of a dict per node, on every prompt."""

    version: int
    journal_seq: int
    journal_bytes: int
    ids: list[str]  # every node id
    labels: list[str]  # their labels, lowercased
    kinds: list[str]
    weights: list[float]
    sources: list[str]  # the node's source event when it has exactly one, else ""
    focus: list[str]
    fp: dict[str, str]  # ledger fingerprints of the nodes that can be news
    rev: dict[str, int]  # journal seq at which each fingerprint appeared
    file_intents: dict[str, list[str]]  # file node id → decisions about it


class ToolIndex(TypedDict):
    """``<sid>.tool-index.json`` (:func:`rolling_graph.store.index.build_tool_index`): the part of
    the index a tool result reads, written beside it."""

    version: int
    journal_seq: int
    journal_bytes: int
    ids: list[str]  # every node id
    file_intents: dict[str, list[str]]  # file node id → decisions about it
    fp: dict[str, str]  # fingerprints of those decisions


#: node → ``[(verb, other node, ">" outgoing | "<" incoming)]`` (:func:`rolling_graph.core.adjacency.adjacency`).
Adjacency = dict[str, list[tuple[str, str, str]]]


class HookView(Protocol):
    """What the injection code reads and writes of a session while the hook holds it:
    ``SidecarStore.hook_transaction``'s view, or a whole document held in a transaction."""

    @property
    def index(self) -> HookIndex: ...

    @property
    def state(self) -> HookState | SessionDoc: ...

    def graph(self) -> GraphDoc: ...

    def branch(self, ids: list[str], linked: list[str]) -> tuple[GraphDoc, Adjacency]:
        """A graph document holding at least the nodes ``ids`` and ``linked`` and the
        neighbours of ``linked``, and the adjacency lists of ``linked``."""
        ...


class NoteTable(Protocol):
    """File id → tool-time note entry, as :mod:`rolling_graph.render.notes` reads the project's
    notes: a plain dict (read from the snapshot itself), or the hook's
    :class:`rolling_graph.warm.notes_cache.Notes`, which decodes an entry when it is asked for.
    An entry is untrusted: a reader checks its shape."""

    def get(self, key: str, /) -> Any: ...

    def __getitem__(self, key: str, /) -> Any: ...

    def __len__(self) -> int: ...

    def items(self) -> Iterable[tuple[str, Any]]: ...


# -- the hook's answer ------------------------------------------------------------------------


class HookSpecificOutput(TypedDict):
    hookEventName: str
    additionalContext: str  # at most 10,000 characters


class HookOutput(TypedDict, total=False):
    """What ``rgraph-hook`` writes on stdout (as JSON), when it says anything."""

    hookSpecificOutput: HookSpecificOutput
    systemMessage: str


# -- the warm graph's resume snapshot ---------------------------------------------------------


class Snapshot(TypedDict):
    """``snapshots/<project_key>.json``: the warm graph's top branches for one project.
    Written by reconciliation; its nodes and edges are checked again when merged."""

    version: int
    project: str
    nodes: list[dict[str, Any]]
    edges: list[dict[str, Any]]
