"""``rgraph demo``: a bundled session replayed through the real hooks, told as it happened.

The session (``rolling_graph/data/demo_session.jsonl``, the ``reversals`` fixture of
``fixtures/make_transcripts.py``) is a user building a notification worker who reverses
three decisions and then runs ``/compact``. The demo prints the replay's summary, then the
conversation: each of the user's prompts, the tool calls between them, and every block the
hooks injected, in full, where it was injected — the restore block after the compaction
included — and last the graph the session ended with.

It runs offline (no model, no database) in a throw-away state directory that is deleted at
the end, unless ``--keep``: then it prints the exact command that shows the kept session.
"""

from __future__ import annotations

import shlex
import shutil
import tempfile
from collections import Counter
from importlib import resources
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.padding import Padding
from rich.text import Text

from rolling_graph.cli import replay as cli_replay
from rolling_graph.cli.console import fail
from rolling_graph.cli.render_views import render_text
from rolling_graph.replay.run import EventRecord, ReplayOptions, replay
from rolling_graph.replay.transcript import parse_transcripts

#: How many distinct tool calls of one run between two prompts are named before "and N more".
TOOLS_NAMED = 4
INDENT = (0, 0, 0, 4)


def demo_transcript() -> Path:
    """The bundled demo session (a transcript in Claude Code's JSONL format)."""
    return Path(str(resources.files("rolling_graph") / "data" / "demo_session.jsonl"))


def prompts_of(transcript: Path) -> dict[int, str]:
    """The user's prompts of a transcript, in full, by replay event index."""
    return {
        event.index: str(event.payload.get("prompt", ""))
        for event in parse_transcripts([transcript])
        if event.hook_event_name == "UserPromptSubmit"
    }


def _tools_line(labels: list[str]) -> str:
    """``7 tool calls: Write src/q.py, Bash pytest ×4, Edit src/q.py ×2`` (repeats counted)."""
    counts = Counter(labels)
    distinct = list(counts)
    named = ", ".join(f"{label} ×{counts[label]}" if counts[label] > 1 else label for label in distinct[:TOOLS_NAMED])
    more = f" and {len(distinct) - TOOLS_NAMED} more" if len(distinct) > TOOLS_NAMED else ""
    return f"{len(labels)} tool call{'s' if len(labels) != 1 else ''}: {named}{more}"


def render_conversation(records: list[EventRecord], prompts: dict[int, str], console: Console) -> None:
    """The session as it happened: prompts, tool calls, and every injection in full."""
    injections = [r for r in records if r.injection]
    console.rule(
        f"What the model was told: all {len(injections)} injections, beside the user's {len(prompts)} prompts"
    )
    console.print(
        "[dim]Each block below is the hook's additionalContext, in full, at the event that injected it. "
        "Between injections the ledger holds back what the model was already told.[/]"
    )
    tools: list[str] = []

    def flush_tools() -> None:
        if tools:
            console.print(Padding(Text(_tools_line(tools), style="dim"), INDENT), highlight=False)
            tools.clear()

    for r in records:
        if r.event == "PostToolUse" and not r.injection:
            tools.append(r.label)
            continue
        flush_tools()
        if r.event == "UserPromptSubmit":
            console.print(f"\n[bold]#{r.index} user ›[/] ", end="")
            console.print(prompts.get(r.index, r.label), markup=False, highlight=False)
        elif r.event == "PostToolUse":
            console.print(Padding(Text(f"tool call: {r.label}"), INDENT), highlight=False)
        elif r.event == "PreCompact":
            console.rule(f"#{r.index} the conversation is compacted ({escape(r.source or 'auto')}): PreCompact saves the graph")
        elif r.event == "SessionStart" and r.source == "compact":
            console.print(
                f"\n[bold]#{r.index} SessionStart(compact)[/]: the conversation restarts from Claude's summary; "
                "the hook restores the graph's view of the session:"
            )
        elif r.event == "SessionStart":
            console.print(f"[bold]#{r.index} SessionStart({escape(r.source or 'startup')})[/]")
        elif r.event == "SessionEnd":
            console.print(f"\n[bold]#{r.index} SessionEnd[/] ({escape(r.label or 'exit')})")
        else:  # Stop and other events inject nothing worth a line
            continue
        if r.injection:
            console.print(Padding(f"→ injected, ~{r.injected_tokens} tokens:", INDENT), style="green")
            console.print(Padding(Text(r.injection), INDENT), highlight=False)  # recorded text, never markup
        elif r.event in ("UserPromptSubmit", "SessionStart"):
            console.print(Padding("→ nothing injected (nothing new for the model)", INDENT), style="dim")
        if r.error:
            console.print(Padding(Text(f"hook error: {r.error}", style="red"), INDENT), highlight=False)
    flush_tools()


def _closing(console: Console, home: Path, sid: str, node: str | None, keep: bool) -> None:
    console.rule()
    if not keep:
        console.print(
            "The demo ran in a throw-away state directory, now deleted; your own sessions were not touched. "
            "To explore the demo's graph afterwards (rgraph show, why, expand, view), run [bold]rgraph demo --keep[/]."
        )
        return
    env = f"ROLLING_GRAPH_HOME={shlex.quote(str(home))}"
    console.print(f"The demo's state directory is kept in {escape(str(home))} (apart from your own sessions). Explore it with:")
    lines = [f"{env} rgraph show --session {sid}", f"{env} rgraph view --session {sid}"]
    if node:
        lines.insert(1, f"{env} rgraph why {shlex.quote(node)} --session {sid}")
    for line in lines:
        console.print(f"  {line}", markup=False, highlight=False, soft_wrap=True)
    console.print(f"Delete it when done: rm -r {shlex.quote(str(home))}", markup=False, highlight=False, soft_wrap=True)


def run_demo(console: Console, *, keep: bool = False, budget: int = 800) -> Path | None:
    """Replay the demo session and tell it; returns the kept state directory (``keep``) or None."""
    home = Path(tempfile.mkdtemp(prefix="rgraph-demo-"))
    try:
        console.rule("[bold]Rolling Graph demo[/bold]: a recorded session replayed through the hooks")
        options = ReplayOptions(probe="offline", mode="sync", budget=budget, clock="transcript", subprocess=False)
        transcript = demo_transcript()
        result = replay([transcript], options=options, home=home)
        cli_replay.render_summary(result.summary(), console, show_home=False, show_injections=False)
        sid = next(iter(result.final_docs), None)
        if sid is None:
            raise fail("the demo transcript produced no session; reinstall rolling-graph")
        render_conversation(result.records, prompts_of(transcript), console)
        console.rule("The session's graph at the end (rgraph show)")
        doc = result.final_docs[sid]
        console.print(render_text(doc, title=f"Session {sid}"))
        _closing(console, home, sid, next(iter(doc.get("focus") or []), None), keep)
    finally:
        if not keep:
            shutil.rmtree(home, ignore_errors=True)
    return home if keep else None
