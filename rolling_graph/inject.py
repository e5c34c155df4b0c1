"""What the model is told, and when: prompt deltas, the full LOD block, tool notes.

Each injection is decided from the hook index first (:mod:`rolling_graph.index`); the
graph is parsed only when there is something to say. The ledger records what was shown.
``view`` is the hook's locked view of a session (:meth:`SidecarStore.hook_transaction`).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .config import Settings


def count_injection(doc: dict[str, Any], text: str, settings: Settings) -> None:
    from .render import estimate_tokens

    c = doc["counters"]
    tokens = estimate_tokens(text, settings.render.chars_per_token)
    c["injections"] = c.get("injections", 0) + 1
    c["injected_tokens"] = c.get("injected_tokens", 0) + tokens
    c["last_injection_tokens"] = tokens


# Each injection is decided from the hook index first; the graph is parsed only when there
# is something to say (see rolling_graph.index).


def prompt_context(view: Any, prompt: str, settings: Settings, event_id: str | None = None) -> str:
    """What a prompt gets: what is new since the last note, and any branch it names.

    A named branch gets the full LOD budget; a plain delta the smaller delta budget.
    """
    from . import index as index_mod
    from . import ledger as ledger_mod

    index, ledger = view.index, view.state["ledger"]
    named = index_mod.named_in(index, prompt, event_id)
    if not named and index_mod.nothing_new(index, ledger):
        return ""
    order, fresh = index_mod.delta_order(index, ledger)
    if not order and not named:
        index_mod.mark(ledger, index, [])
        return ""
    from .render import adjacency, render_prompt_note

    doc = view.graph()
    nodes = doc.get("nodes", {})
    named = sorted((n for n in named if n in nodes), key=lambda i: -float(nodes[i].get("weight", 0)))  # as render.mentions orders
    budget = settings.render.budget_tokens if named else settings.render.delta_budget_tokens
    adj = adjacency(doc, [*order[:20], *named[:3]])
    text, shown = render_prompt_note(doc, order, named, settings.render, budget, adj=adj)
    ledger_mod.record(ledger, {n: fresh.get(n) or ledger_mod.fingerprint(n, doc, adj) for n in shown})
    index_mod.mark(ledger, index, [n for n in order if n not in shown])
    return text


def shown_head(label: object) -> str:
    """``esc(label, 40)[:30]``: how the block's lines begin a node's label. Computed
    directly for a plain label (printable, trimmed, single-spaced, nothing to escape),
    which is nearly every label: the full block checks every node of the graph."""
    if isinstance(label, str) and label.isprintable() and label == label.strip() and "  " not in label and not any(c in label for c in '&<>"'):
        return label[:30]
    from .render import esc

    return esc(label, 40)[:30]


class DocView:
    """A combined document held in a ``store.transaction`` seen as a hook view: its graph,
    its state (the same dict) and the journal position an index of it would have."""

    def __init__(self, doc: dict[str, Any]) -> None:
        self.doc = doc
        self.state = doc
        self.index = {"journal_seq": doc.get("journal_seq", 0)}

    def graph(self) -> dict[str, Any]:
        return self.doc


def full_context(view: Any, settings: Settings) -> str:
    """The full LOD block; the ledger restarts from what it shows."""
    from . import index as index_mod
    from . import ledger as ledger_mod
    from .render import adjacency, render_lod

    doc = view.graph()
    text = render_lod(doc, settings.render)
    shown = [n for n, node in doc.get("nodes", {}).items() if (head := shown_head(node.get("label", n))) and head in text]
    adj = adjacency(doc, shown)
    ledger: dict[str, Any] = {}
    ledger_mod.record(ledger, {n: ledger_mod.fingerprint(n, doc, adj) for n in shown})
    index_mod.mark(ledger, view.index, [])
    view.state["ledger"] = ledger
    return text


def tool_context(view: Any, event: dict[str, Any], settings: Settings) -> str:
    """Proactive note when a tool touches a file the graph ties to a decision not yet told."""
    from . import index as index_mod

    news = index_mod.tool_news(view.index, view.state["ledger"], event.get("paths", []))
    if not news:
        return ""
    from . import ledger as ledger_mod
    from .render import adjacency, render_nodes

    doc = view.graph()
    nodes = doc["nodes"]
    news = sorted((n for n in news if n in nodes), key=lambda i: -float(nodes[i].get("weight", 0)))
    adj = adjacency(doc, news)
    shown_path = next(iter(event.get("paths", [])), "this file")
    text, shown = render_nodes(doc, news, f"Memory about {shown_path[:80]}:", settings.render.tool_budget_tokens, settings.render)
    ledger_mod.record(view.state["ledger"], {n: ledger_mod.fingerprint(n, doc, adj) for n in shown})
    return text


def speak(view: Any, event_name: str, event: dict[str, Any], settings: Settings) -> str:
    if event_name == "UserPromptSubmit":
        text = prompt_context(view, event["text"], settings, event["id"])
    else:
        text = tool_context(view, event, settings)
    if text:
        count_injection(view.state, text, settings)
    return text
