"""What the model is told, and when: prompt deltas, the full LOD block, tool notes.

Each injection is decided from the hook index first (:mod:`rolling_graph.store.index`); the
graph is parsed only when there is something to say. The ledger records what was shown.
``view`` is the hook's locked view of a session (:meth:`SidecarStore.hook_transaction`).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:

    from rolling_graph.core.config import Settings
    from rolling_graph.core.types import (
        Adjacency,
        GraphDoc,
        HookIndex,
        HookState,
        HookView,
        NoteTable,
        PendingEvent,
        SessionDoc,
    )


#: Nodes remembered as restored by name (the state file is rewritten on every event).
RESTORED_MAX = 200


def count_injection(doc: HookState | SessionDoc, text: str, settings: Settings) -> None:
    from rolling_graph.render.lod import estimate_tokens

    c = doc["counters"]
    tokens = estimate_tokens(text, settings.render.chars_per_token)
    c["injections"] += 1
    c["injected_tokens"] += tokens
    c["last_injection_tokens"] = tokens


# Each injection is decided from the hook index first; the graph is parsed only when there
# is something to say (see rolling_graph.store.index).


def prompt_context(view: HookView, prompt: str, settings: Settings, event_id: str | None = None, room_chars: int | None = None) -> str:
    """What a prompt gets: what is new since the last note, and any branch it names (once).

    A named branch gets the full LOD budget; a plain delta the smaller delta budget; both
    within ``room_chars`` when given (what the session's note budget leaves).
    """
    from rolling_graph.core import ledger as ledger_mod
    from rolling_graph.store import index as index_mod

    index, ledger = view.index, view.state["ledger"]
    # A named branch is restored once: a node restored for being named is not rendered again
    # for being named again (what changes in it comes as news); the list restarts with the
    # ledger after a full block (a compaction, a resume), when the conversation has forgotten.
    restored = view.state["counters"].get("named_restored") or []
    named = [n for n in index_mod.named_in(index, prompt, event_id) if n not in restored]
    if not named and index_mod.nothing_new(index, ledger):
        return ""
    order, fresh = index_mod.delta_order(index, ledger)
    if not order and not named:
        index_mod.mark(ledger, index["journal_seq"], [])
        return ""
    from rolling_graph.render.lod import render_prompt_note

    # The branches it shows, not the whole graph: the news, what the prompt names, and the
    # links of the first of each (rolling_graph.store.branches).
    doc, adj = view.branch([*order, *named], [*order[:20], *named])
    nodes = doc["nodes"]
    order = [n for n in order if n in nodes]  # (an index a crash left ahead of its graph names no ghost)
    named = sorted((n for n in named if n in nodes), key=lambda i: -nodes[i]["weight"])  # as render.mentions orders
    budget = settings.render.budget_tokens if named else settings.render.delta_budget_tokens
    if room_chars is not None:
        budget = min(budget, int(room_chars / settings.render.chars_per_token))
    adj = {nid: adj[nid] for nid in dict.fromkeys([*order[:20], *named[:3]]) if nid in adj}
    text, shown = render_prompt_note(doc, order, named, settings.render, budget, adj=adj, told=ledger["told"])
    if named:
        view.state["counters"]["named_restored"] = [*restored, *(n for n in named if n in shown)][-RESTORED_MAX:]
    ledger_mod.record(ledger, {n: fresh.get(n) or ledger_mod.fingerprint(n, doc, adj) for n in shown})
    index_mod.mark(ledger, index["journal_seq"], [n for n in order if n not in shown])
    return text


class DocView:
    """A combined document held in a ``store.transaction`` seen as a hook view: its graph,
    its state (the same dict) and an index that finds nothing (only the restore block, which
    renders from the graph, is given one)."""

    def __init__(self, doc: SessionDoc) -> None:
        self.doc = doc
        self.state = doc
        self.index: HookIndex = {
            "version": 0, "journal_seq": doc["journal_seq"], "journal_bytes": 0, "ids": [], "labels": [], "kinds": [], "weights": [],
            "sources": [], "focus": [], "fp": {}, "rev": {}, "file_intents": {},
        }

    def graph(self) -> SessionDoc:
        return self.doc

    def branch(self, ids: list[str], linked: list[str]) -> tuple[GraphDoc, Adjacency]:
        from rolling_graph.core.adjacency import adjacency

        return self.doc, adjacency(self.doc, linked)


def restart_ledger(view: HookView, doc: GraphDoc, shown: list[str], fingerprints: dict[str, str] | None = None) -> None:
    """After a full block (LOD or restore), the ledger starts again from what it showed:
    later prompts get only what is new since. ``fingerprints``: the nodes' fingerprints as
    kept with the graph's view (:func:`rolling_graph.render.view_cache.fingerprints`), taken
    instead of walking the graph's edges when they hold every node shown."""
    from rolling_graph.core import ledger as ledger_mod
    from rolling_graph.core.model import new_ledger
    from rolling_graph.store import index as index_mod

    if fingerprints is not None and all(n in fingerprints for n in shown):
        marks = {n: fingerprints[n] for n in shown}
    else:
        from rolling_graph.core.adjacency import adjacency

        adj = adjacency(doc, shown)
        marks = {n: ledger_mod.fingerprint(n, doc, adj) for n in shown}
    ledger = new_ledger()
    ledger_mod.record(ledger, marks)
    index_mod.mark(ledger, doc["journal_seq"], [])
    view.state["ledger"] = ledger
    view.state["counters"].pop("named_restored", None)


def tool_context(view: HookView, event: PendingEvent, settings: Settings) -> str:
    """Proactive note when a tool touches a file the graph ties to a decision not yet told."""
    if not event["paths"]:
        return ""  # (nothing to look up: a tool result's index is then never read)
    from rolling_graph.store import index as index_mod

    news = index_mod.tool_news(view.index, view.state["ledger"], event["paths"])
    if not news:
        return ""
    from rolling_graph.core import ledger as ledger_mod
    from rolling_graph.render.lod import render_nodes

    doc, adj = view.branch(news, news)  # those decisions and their links, not the whole graph
    nodes = doc["nodes"]
    news = sorted((n for n in news if n in nodes), key=lambda i: -nodes[i]["weight"])
    shown_path = next(iter(event["paths"]), "this file")  # the payload's text: render_nodes escapes it
    text, shown = render_nodes(doc, news, f"Memory about {shown_path[:80]}:", settings.render.tool_budget_tokens, settings.render,
                               adj=adj)
    ledger_mod.record(view.state["ledger"], {n: ledger_mod.fingerprint(n, doc, adj) for n in shown})
    return text


def speak(view: HookView, event_name: str, event: PendingEvent, settings: Settings, notes: NoteTable | None = None) -> str:
    """What this event tells the model: the session's own news, and (``notes``: the project's
    tool-time notes, :mod:`rolling_graph.render.notes`) what earlier sessions know of what
    it names or touches."""
    from rolling_graph.render.notes import charge, session_left
    from rolling_graph.safety.sanitize import token_chars

    counters = view.state["counters"]
    if event_name == "UserPromptSubmit":
        # Everything a prompt is told between full blocks counts against the session's note
        # budget (RenderSettings.note_session_tokens), its own news and named branches included.
        left = session_left(counters, settings.render)
        text = prompt_context(view, event["text"], settings, event["id"], left)
        charge(counters, token_chars(text))
        if notes:
            from rolling_graph.render.notes import prompt_notes

            room = min(int(settings.render.budget_tokens * settings.render.chars_per_token), left) - token_chars(text) - (1 if text else 0)
            extra = prompt_notes(counters, event["text"], notes, settings.render, room)
            if text and extra:
                charge(counters, 1)  # the line between them
            text = f"{text}\n{extra}" if text and extra else text or extra
    else:
        text = tool_context(view, event, settings)
        charge(counters, token_chars(text))
        if notes is not None:  # (with no room left it still records what the tool touched)
            from rolling_graph.render.notes import tool_note

            note = tool_note(counters, event, notes if not text else {}, settings.render)
            text = text or note
    if text:
        count_injection(view.state, text, settings)
    return text
