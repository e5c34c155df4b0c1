"""Task lists, answers and plans folded for the offline probe.

* **tasks** — TodoWrite items, TaskCreate/TaskUpdate (by their id) and tracker issues
  (``bd``, through :mod:`.offline_commands`): ``task`` nodes with ``status``; the task in
  progress is the topic later edits hang from; a new task ``depends_on`` from the request
* **answers** to Claude's questions (AskUserQuestion): ``decision`` nodes in the user's
  words (the option chosen under the question's header), ``informs`` the task at hand
* **plans** (ExitPlanMode, approved): a ``summary`` under the plan's title (a heading, not a
  decision) that ``decides`` the code names it plans to touch
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from rolling_graph.core.ids import slugify
from rolling_graph.core.model import TASK_STATUSES
from rolling_graph.probe.code_names import frequent_names, quoted_names
from rolling_graph.probe.proposal import FoldState, Proposal
from rolling_graph.safety.sanitize import sentence_ends

if TYPE_CHECKING:
    from rolling_graph.core.types import ToolData


#: Prompts that continue the work rather than ask for something.
#: What is no request: an acknowledgement, a nudge to go on, a greeting (as typed, lower case,
#: without trailing punctuation; a prompt of at most :data:`NOT_A_REQUEST_WORDS` words that is
#: one of these, or opens with one of the openers and says nothing else of substance).
_ACKS = frozenset({
    "continue", "go on", "ok", "okay", "yes", "y", "proceed", "go ahead", "thanks", "thank you", "next", "sure",
    "please continue", "keep going", "carry on", "resume", "done", "good", "great", "cool", "nice", "perfect", "lgtm",
})
_NOT_A_REQUEST_OPENERS = ("continue", "go on", "keep going", "carry on", "resume", "pick up", "hi", "hello", "hey", "thanks",
                          "thank you", "good morning", "ok", "okay", "yes")
_NOT_A_REQUEST_TAILS = frozenset("where we left off where you left off from where we stopped again there please claude now the work "
                                 "with the task the session from before".split(" "))
NOT_A_REQUEST_WORDS = 8


#: Words of an assent that names nothing ("yes, please do", "ok, let's do this", "yes do option 1").
_ASSENT = frozenset("""yes yeah yep ok okay sure please do it this that let's lets let us go ahead try give a the was is idea
    so then now too fine good right exactly correct agreed sounds great perfect thanks option one first again
    it's that's add implement""".split())
#: How text the user pasted rather than typed opens: a hook's message, a terminal's output.
_PASTED = ("operation stopped by hook:", "===", "--- fail", "⏺", "❯", "> ", "+ ", "unknown command", "building ")


def is_request(text: str) -> bool:
    """Is a prompt, as the user typed it (:func:`typed_text`), something the user asked to be
    done? A slash command, an acknowledgement, a greeting or a "continue"-type nudge is not
    ("continue where we left off", "hello again"): it must never become the session's request.
    Nor is an assent that names nothing ("yes, please do", "let's try 2") — the request it
    agrees to stays the request — nor text pasted from a terminal or a hook's message."""
    words = " ".join(text.lower().strip(" .!?,:;").split())
    if not words or words.startswith("/"):
        return False
    if words in _ACKS or words.startswith(_PASTED):
        return False
    bare = [w.strip(".,!?:;=+()'\"") for w in words.split()]
    if all(not w or w in _ASSENT or w.isdigit() or not any(c.isalpha() for c in w) for w in bare):
        return False
    if len(words.split()) > NOT_A_REQUEST_WORDS:
        return True
    for opener in _NOT_A_REQUEST_OPENERS:
        if words == opener or words.startswith(opener + " ") or words.startswith(opener + ","):
            rest = words[len(opener):].strip(" ,.!")
            if all(w in _NOT_A_REQUEST_TAILS for w in rest.split()):
                return False
    return True


def task_node(p: Proposal, state: FoldState, seq: int | None, *, ref: str | None = None, title: str | None = None,
              status: str | None = None, key: str | None = None) -> str | None:
    """A task-list item (tracker ref, or the item's own words as ``key``) and its status."""
    ident = ref or key
    if not ident:
        return None
    nid = "task-" + slugify(ident)[:59]
    label = (f"{ref}: {title}" if ref and title else title or ident)[:120]
    if p.exists(nid) and title and p.label_of(nid) != label:
        p.relabel(nid, label)
    new = not p.exists(nid)
    tid = p.node(label, "project", "task", nid=nid, activate=bool(status))
    if not tid:
        return None
    if ref:
        p.set(tid, ref=ref[:40])
    if status:
        p.set(tid, status=status)
    p.by(tid, "assistant", seq)
    if new:
        p.edge(state.request, "depends_on", tid, 0.5)
    if status == "in_progress":
        state.task = state.topic = tid
    elif status in ("completed", "dropped") and state.task == tid:
        state.task = None
    return tid


def fold_todos(p: Proposal, state: FoldState, data: ToolData, seq: int | None, *, subagent: bool = False) -> None:
    """A TodoWrite call states the whole list: its items' statuses, and, by leaving them
    out, that this session's earlier items still open are off it (:func:`drop_unlisted`).
    A subagent's list is its own: it adds its items and takes none of the session's off."""
    listed: set[str] = set()
    for content, status in data.get("todos", []):
        nid = "task-" + slugify(content)[:59]
        listed.add(nid)
        if p.exists(nid) and p.fact(nid, "status") == status:
            continue
        task_node(p, state, seq, key=content, title=content, status=status)
    if listed and not subagent:  # an empty list is a call we could not read, not a cleared one
        drop_unlisted(p, state, listed)


def drop_unlisted(p: Proposal, state: FoldState, listed: set[str]) -> None:
    """Items of this session's earlier TodoWrite lists that are still open and that the new
    list no longer holds were taken off it without being done (Claude wrote a new plan):
    ``dropped``, so no block says they are open. Only a task-list item's node (``task-…``
    without a tracker or TaskCreate ``ref``) made in this session (not pulled from the warm
    graph: an earlier session's list is not this one's); a completed item stays done."""
    for nid in p.of_kind("task"):
        if (nid in listed or not nid.startswith("task-") or p.fact(nid, "ref") or p.get(nid).get("pulled")
                or p.fact(nid, "status") not in ("pending", "in_progress")):
            continue
        p.set(nid, status="dropped")
        if state.task == nid:
            state.task = None


def fold_task_tools(p: Proposal, state: FoldState, tool: str, data: ToolData, seq: int | None) -> None:
    ref, subject = data.get("ref", ""), data.get("subject", "")
    if tool == "TaskCreate" and subject:
        tid = task_node(p, state, seq, key=subject, title=subject, status="pending")
        if tid and ref:
            p.set(tid, ref=ref[:40])
        return
    tid = p.find("task", ref=ref) if ref else None
    status = data.get("status")
    status = "dropped" if status == "deleted" else status if status in TASK_STATUSES else None
    if tid:
        if subject:
            p.relabel(tid, subject[:120])
        p.node(p.label_of(tid), "project", "task", nid=tid)
        if status:
            p.set(tid, status=status)
            if status == "in_progress":
                state.task = state.topic = tid
            elif state.task == tid:
                state.task = None
        p.by(tid, "assistant", seq)
    elif subject:
        task_node(p, state, seq, key=subject, title=subject, status=status)


def gist(text: str, limit: int = 110) -> str:
    """The opening of ``text`` in whole sentences within ``limit`` characters, else its
    first sentence cut at a word."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    ends = [end for end in sentence_ends(text) if end <= limit]
    if ends and ends[-1] >= 50:
        return text[: ends[-1]]
    return text[: limit - 1].rsplit(" ", 1)[0].rstrip(",;:") + "…"


def fold_answers(p: Proposal, state: FoldState, data: ToolData, seq: int | None) -> None:
    """The user's answers to Claude's question. An answer under a header ("Scope: Only annual
    plans for now") is a choice between the options Claude offered: a ``decision`` by the user.
    A bare answer is what the user asked for (a ``request``), unless it names nothing ("3")."""
    for header, question, answer in data.get("qa", []):
        answer = answer.replace(" (Recommended)", "").strip()
        # "Only annual plans for now (Scope)": a plain statement of the choice, under its header
        label = gist(f"{answer} ({header})" if header and answer else answer)
        summary = f"Q: {question} — A: {answer}"[:280]
        if header and answer:
            rid = p.node(label, "project", "decision", summary=summary, nid="ans-" + slugify(label)[:59])
        elif is_request(answer):
            rid = p.node(label, "project", "request", summary=summary, nid="req-" + slugify(label)[:59])
        else:
            continue
        p.by(rid, "user", seq)
        p.edge(rid, "informs", state.task or state.topic, 0.6)


def fold_plan(p: Proposal, state: FoldState, data: ToolData, seq: int | None) -> None:
    plan = data.get("plan", "")
    lines = [ln.strip() for ln in plan.splitlines() if ln.strip()]
    if not lines or data.get("failed"):
        return
    title = lines[0].lstrip("#").strip()
    title = re.sub(r"^(?:implementation\s+)?plan\s*[:—-]\s*", "", title, flags=re.IGNORECASE) or title
    summary = next((ln for ln in lines[1:] if not ln.startswith("#")), "")
    # The plan is a summary of the work to come, under its title ("Plan: Extraction and
    # Documentation Plan"): a heading, no decision (the block showed none of them either).
    pid = p.node(gist(f"Plan: {title}", 100), "technical", "summary", summary=summary[:280] or None, nid="plan-" + slugify(title)[:58])
    p.by(pid, "assistant", seq)
    for name in list(dict.fromkeys(quoted_names(plan, 8) + frequent_names(plan, 10)))[:14]:
        sid = p.node(name, "technical", "symbol")
        p.by(sid, "assistant", seq)
        p.edge(pid, "decides", sid, 0.5)
    if not state.task:
        state.topic = pid
