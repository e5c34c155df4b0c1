"""``rgraph stats``: telemetry that makes the memory's value (and cost) visible.

Per session and overall: events, gate firings by trigger, probes by backend with tokens
and estimated cost, tokens injected per event and cumulatively, nodes and edges by
domain, cross-domain edges, nodes pulled on resume and later touched (useful pulls), and
graduation outcomes once the warm graph provides them.

:func:`session_stats` and :func:`overall_stats` are pure; the command around them reads
the sidecars, the journals and the daily usage files.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from rolling_graph.cli.console import console, fail
from rolling_graph.cli.render_views import clean, edges_of, nodes_of
from rolling_graph.cli.sessions import (
    InspectError,
    list_sessions,
    load_document,
    load_journal,
    resolve_session,
    settings_or_error,
)
from rolling_graph.core.clock import parse_iso
from rolling_graph.core.config import Settings
from rolling_graph.core.ids import pointer_parts
from rolling_graph.core.model import DOMAINS, new_counters
from rolling_graph.probe import usage

if TYPE_CHECKING:
    from rolling_graph.core.types import GraphDoc, JournalEntry, Node, SessionDoc

_SUMMED = (
    "events",
    "prompts",
    "tool_events",
    "gate_fired",
    "probes",
    "probe_tokens_in",
    "probe_tokens_out",
    "patches_rejected",
    "injections",
    "injected_tokens",
    "nodes",
    "edges",
    "cross_domain_edges",
    "supersedes_edges",
    "pulled",
    "pulled_touched",
    "forgotten",
    "put_back",
)
_PULL_KINDS = ("resume", "pull")


def _int(value: Any) -> int:
    try:
        return int(value or 0)
    except (TypeError, ValueError):
        return 0


def _domain(node: Node | None) -> str:
    domain = node.get("domain") if node else None
    return domain if domain in DOMAINS else "other"


def pull_records(journal: list[JournalEntry]) -> dict[str, tuple[str, int]]:
    """Per node pulled in from the warm graph: (when, its activation count at the pull)."""
    records: dict[str, tuple[str, int]] = {}
    for entry in journal:
        if entry.get("kind") not in _PULL_KINDS:
            continue
        for op in entry.get("ops") or []:
            parts = pointer_parts(op.get("path")) if isinstance(op, dict) else []
            if len(parts) == 2 and parts[0] == "nodes" and op.get("op") == "add":
                raw = op.get("value")
                value = raw if isinstance(raw, dict) else {}
                records.setdefault(parts[1], (str(entry.get("at") or ""), _int(value.get("activations"))))
    return records


def useful_pulls(doc: GraphDoc, journal: list[JournalEntry]) -> tuple[list[str], list[str]]:
    """(pulled node ids, those touched after the pull: activated again, or a later activation)."""
    nodes = nodes_of(doc)
    records = pull_records(journal)
    pulled = sorted(nid for nid, n in nodes.items() if n.get("pulled"))
    touched = []
    for nid in pulled:
        node = nodes[nid]
        default_count = 0 if node.get("origin") == "warm" else 1
        when, count_at_pull = records.get(nid, (None, default_count))
        pulled_at, last = parse_iso(when), parse_iso(node.get("last_activated"))
        later = pulled_at is not None and last is not None and last > pulled_at
        if _int(node.get("activations")) > count_at_pull or later:
            touched.append(nid)
    return pulled, touched


def session_stats(
    doc: SessionDoc, journal: list[JournalEntry], *, cost_usd: float | None = None
) -> dict[str, Any]:
    """Everything ``rgraph stats`` reports about one session, as plain values."""
    counters = doc.get("counters") or new_counters()
    nodes, edges = nodes_of(doc), edges_of(doc)
    by_domain = Counter(_domain(n) for n in nodes.values())
    edges_by_domain: Counter[str] = Counter()
    cross: Counter[str] = Counter()
    for edge in edges.values():
        src, dst = _domain(nodes.get(edge["source"])), _domain(nodes.get(edge["target"]))
        if src == dst:
            edges_by_domain[src] += 1
        else:
            cross["↔".join(sorted((src, dst)))] += 1
    probes_by_backend: Counter[str] = Counter()
    failed_calls: Counter[str] = Counter()
    tokens_by_backend: dict[str, dict[str, int]] = {}
    for entry in journal:
        if entry.get("kind") in ("patch", "rejected") and entry.get("backend"):
            backend = clean(entry.get("backend"), 30)
            probes_by_backend[backend] += 1
            row = tokens_by_backend.setdefault(backend, {"tokens_in": 0, "tokens_out": 0})
            row["tokens_in"] += _int(entry.get("input_tokens", entry.get("tokens_in")))
            row["tokens_out"] += _int(entry.get("output_tokens", entry.get("tokens_out")))
            if entry.get("failed_backend"):  # a model call failed first, and cost this much
                failed = clean(entry.get("failed_backend"), 30)
                failed_calls[failed] += 1
                row = tokens_by_backend.setdefault(failed, {"tokens_in": 0, "tokens_out": 0})
                row["tokens_in"] += _int(entry.get("failed_tokens_in"))
                row["tokens_out"] += _int(entry.get("failed_tokens_out"))
    recorded = counters.get("probes_by_backend")
    if recorded:  # the runner's own count wins over the journal's
        probes_by_backend = Counter({clean(k, 30): _int(v.get("probes") if isinstance(v, dict) else v) for k, v in recorded.items()})
    pulled, touched = useful_pulls(doc, journal)
    events = _int(counters.get("events"))
    injected = _int(counters.get("injected_tokens"))
    gate_reasons = counters.get("gate_reasons") or {}
    return {
        "session_id": clean(doc.get("session_id"), 128),
        "project": doc.get("project"),
        "updated_at": doc.get("updated_at"),
        "events": events,
        "prompts": _int(counters.get("prompts")),
        "tool_events": _int(counters.get("tool_events")),
        "gate_fired": _int(counters.get("gate_fired")),
        "gate_by_trigger": {clean(k, 40): _int(v) for k, v in sorted(gate_reasons.items())},
        "probes": _int(counters.get("probes")) or sum(probes_by_backend.values()),
        "probes_by_backend": dict(sorted(probes_by_backend.items())),
        "failed_calls_by_backend": dict(sorted(failed_calls.items())),
        "tokens_by_backend": dict(sorted(tokens_by_backend.items())),
        "probe_tokens_in": _int(counters.get("probe_tokens_in")),
        "probe_tokens_out": _int(counters.get("probe_tokens_out")),
        "estimated_cost_usd": cost_usd,
        "patches_rejected": _int(counters.get("patches_rejected"))
        or sum(1 for e in journal if e.get("kind") == "rejected"),
        "injections": _int(counters.get("injections")),
        "injected_tokens": injected,
        "injected_tokens_per_event": round(injected / events, 1) if events else 0.0,
        "nodes": len(nodes),
        "edges": len(edges),
        "nodes_by_domain": {d: by_domain[d] for d in (*DOMAINS, "other") if by_domain[d]},
        "edges_by_domain": {d: edges_by_domain[d] for d in (*DOMAINS, "other") if edges_by_domain[d]},
        "cross_domain_edges": sum(cross.values()),
        "cross_domain_pairs": dict(sorted(cross.items())),
        "supersedes_edges": sum(1 for e in edges.values() if e.get("relationship") == "supersedes"),
        "pulled": len(pulled),
        "pulled_touched": len(touched),
        "pulled_touched_ids": touched,
        # What the user took out (rgraph forget) and put back: how often the memory was wrong.
        "forgotten": sum(_removed_nodes(e) for e in journal if e.get("kind") == "forget"),
        "put_back": sum(_removed_nodes(e) for e in journal if e.get("kind") == "unforget"),
        "journal_by_kind": dict(sorted(Counter(clean(e.get("kind"), 20) for e in journal).items())),
    }


def _removed_nodes(entry: JournalEntry) -> int:
    """The nodes a ``forget`` entry removes, or an ``unforget`` entry adds back."""
    paths = (pointer_parts(op.get("path")) for op in entry.get("ops") or [] if isinstance(op, dict))
    return sum(1 for parts in paths if len(parts) == 2 and parts[0] == "nodes")


#: Probes listed per session (the latest).
PROBE_ROWS = 12


def probe_list(journal: list[JournalEntry]) -> list[dict[str, Any]]:
    """One row per probe: when, which backend (and why it was chosen), why the gate fired,
    tokens, estimated cost, what it did, and any fallback."""
    rows = []
    for entry in journal:
        if entry.get("kind") not in ("patch", "rejected") or entry.get("backend") in (None, "user", "warm"):
            continue
        t_in, t_out = _int(entry.get("input_tokens")), _int(entry.get("output_tokens"))
        cost = usage.estimate_cost(entry.get("model"), t_in, t_out, entry.get("backend"))
        backend = clean(entry.get("backend"), 30)
        if entry.get("failed_backend"):  # the spend that happened: the failed call's, then the fallback's
            f_in, f_out = _int(entry.get("failed_tokens_in")), _int(entry.get("failed_tokens_out"))
            f_cost = usage.estimate_cost(entry.get("failed_model"), f_in, f_out, entry.get("failed_backend"))
            t_in, t_out = t_in + f_in, t_out + f_out
            cost = None if cost is None or f_cost is None else round(cost + f_cost, 6)
            backend = f"{backend} (after {clean(entry.get('failed_backend'), 30)} failed)"
        rows.append({
            "seq": _int(entry.get("seq")),
            "at": entry.get("at"),
            "backend": backend,
            "model": clean(entry.get("model") or "", 40) or None,
            "selected_because": clean(entry.get("selected_because") or "", 120) or None,
            "fired_on": [clean(r, 30) for r in entry.get("reasons", []) if isinstance(r, str)],
            "events": len(entry.get("event_ids") or []),
            "tokens_in": t_in,
            "tokens_out": t_out,
            "cost_usd": cost,
            "outcome": "rejected: " + clean(entry.get("error"), 100) if entry.get("kind") == "rejected" else f"{len(entry.get('ops') or [])} ops",
            "fallback": clean(entry.get("fallback_reason") or "", 120) or None,
        })
    return rows


def render_probes(rows: list[dict[str, Any]]) -> Table:
    table = Table(title=f"Probes (latest {min(len(rows), PROBE_ROWS)} of {len(rows)})", title_justify="left")
    for col in ("#", "at", "backend", "fired on", "events", "tokens in/out", "cost", "outcome"):
        table.add_column(col, overflow="fold")
    for r in rows[-PROBE_ROWS:]:
        backend = r["backend"] + (f" (fallback: {r['fallback']})" if r["fallback"] else "")
        table.add_row(
            str(r["seq"]), str(r["at"] or "")[11:19], backend, ", ".join(r["fired_on"]) or "—", str(r["events"]),
            f"{r['tokens_in']}/{r['tokens_out']}", _cost(r["cost_usd"]), r["outcome"],
        )
    return table


def _merge_counts(target: dict[str, int], source: dict[str, Any]) -> None:
    for key, value in source.items():
        target[key] = target.get(key, 0) + (_int(value) if not isinstance(value, dict) else 0)


def overall_stats(sessions: list[dict[str, Any]], *, graduation: dict[str, Any] | None = None) -> dict[str, Any]:
    """Totals over sessions, with cumulative tokens injected per event."""
    total: dict[str, Any] = {key: sum(_int(s.get(key)) for s in sessions) for key in _SUMMED}
    for key in ("gate_by_trigger", "probes_by_backend", "failed_calls_by_backend", "nodes_by_domain", "edges_by_domain", "cross_domain_pairs"):
        merged: dict[str, int] = {}
        for s in sessions:
            _merge_counts(merged, s.get(key) or {})
        total[key] = dict(sorted(merged.items()))
    costs = [s["estimated_cost_usd"] for s in sessions if s.get("estimated_cost_usd") is not None]
    total["estimated_cost_usd"] = round(sum(costs), 6) if costs else None
    total["sessions"] = len(sessions)
    total["injected_tokens_per_event"] = (
        round(total["injected_tokens"] / total["events"], 1) if total["events"] else 0.0
    )
    total["graduation"] = graduation
    return total


# --- I/O edge -------------------------------------------------------------------------------


def session_costs(settings: Settings) -> dict[str, float]:
    """Estimated USD per session from the probe's daily usage files."""
    costs: dict[str, float] = {}
    folder = usage.usage_dir(settings)
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        day = usage.read_day(settings, path.stem)
        for sid, row in (day.get("sessions") or {}).items():
            if isinstance(row, dict):
                costs[sid] = round(costs.get(sid, 0.0) + float(row.get("estimated_cost_usd") or 0.0), 6)
    return costs


def estimated_cost(settings: Settings, stats: dict[str, Any], recorded: dict[str, float]) -> float | None:
    if stats["session_id"] in recorded:
        return recorded[stats["session_id"]]
    model_backends = [b for b in [*stats["probes_by_backend"], *(stats.get("failed_calls_by_backend") or {})] if b not in ("offline", "ollama")]
    if not model_backends:
        return 0.0
    return usage.estimate_cost(
        settings.probe.anthropic_model, stats["probe_tokens_in"], stats["probe_tokens_out"], model_backends[0]
    )


def graduation_outcomes(settings: Settings) -> dict[str, Any] | None:
    """Counts from :func:`rolling_graph.graduation.candidates.outcomes` (None without a database)."""
    from rolling_graph.graduation.candidates import outcomes  # loads the database driver: only when asked

    try:
        return dict(outcomes(settings))
    except Exception:  # the database is optional for stats: say nothing rather than fail
        return None


def collect(settings: Settings, sids: list[str]) -> list[dict[str, Any]]:
    recorded = session_costs(settings)
    rows = []
    for sid in sids:
        journal = load_journal(settings, sid)
        row = session_stats(load_document(settings, sid), journal)
        row["estimated_cost_usd"] = estimated_cost(settings, row, recorded)
        row["probe_list"] = probe_list(journal)
        rows.append(row)
    return rows


def _pairs(mapping: dict[str, Any]) -> str:
    return ", ".join(f"{clean(k, 30)} {v}" for k, v in mapping.items()) or "—"


def _cost(value: float | None) -> str:
    return "unknown" if value is None else f"${value:.4f}"


def count(n: int, noun: str, plural: str | None = None) -> str:
    """``1 prompt``, ``2 prompts``: a count with its noun in the right number."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


#: How each graduation count reads, in order (keys of ``graduation.candidates.outcome_counts``).
GRADUATION_WORDS = (
    ("candidates", "candidate", None), ("pending", "pending", "pending"), ("approved", "approved", "approved"),
    ("rejected", "rejected", "rejected"), ("duplicates", "duplicate", None), ("edited", "edited later", "edited later"),
    ("deleted", "deleted later", "deleted later"),
)


def graduation_text(grad: dict[str, Any]) -> str:
    """The graduation counts as a sentence: no key names, no ``None``."""
    parts = [count(int(grad.get(key) or 0), one, many) for key, one, many in GRADUATION_WORDS if key in grad]
    judged, kept, share = int(grad.get("judged_30d") or 0), int(grad.get("kept_30d") or 0), grad.get("kept_share")
    if judged and share is not None:
        parts.append(f"kept unchanged after 30 days: {kept} of {judged} ({share:.0%})")
    elif "judged_30d" in grad:
        parts.append("kept unchanged after 30 days: none old enough to judge yet")
    return " · ".join(parts) or "—"


def render_stats(stats: dict[str, Any], title: str) -> Table:
    table = Table(title=title, show_header=False, title_justify="left", title_style="bold")
    table.add_column(style="bold")
    table.add_column()
    table.add_row(
        "events",
        f"{stats['events']} ({count(stats.get('prompts', 0), 'prompt')}, {count(stats.get('tool_events', 0), 'tool result')})",
    )
    table.add_row("gate firings", f"{stats['gate_fired']} — by trigger: {_pairs(stats['gate_by_trigger'])}")
    failed = stats.get("failed_calls_by_backend") or {}
    tried = f" · model calls that failed first (and were paid for): {_pairs(failed)}" if failed else ""
    table.add_row("probes", f"{stats['probes']} — by backend: {_pairs(stats['probes_by_backend'])}{tried}")
    table.add_row(
        "probe tokens",
        f"{stats['probe_tokens_in']} in / {stats['probe_tokens_out']} out · est. cost {_cost(stats['estimated_cost_usd'])}",
    )
    table.add_row("rejected patches", str(stats["patches_rejected"]))
    table.add_row(
        "tokens injected",
        f"{stats['injected_tokens']} cumulative over {count(stats['injections'], 'injection')} · "
        f"{stats['injected_tokens_per_event']} per event",
    )
    table.add_row("nodes by domain", f"{stats['nodes']} — {_pairs(stats['nodes_by_domain'])}")
    table.add_row("edges by domain", f"{stats['edges']} — {_pairs(stats['edges_by_domain'])}")
    table.add_row("cross-domain edges", f"{stats['cross_domain_edges']} — {_pairs(stats['cross_domain_pairs'])}")
    table.add_row("supersedes edges", str(stats["supersedes_edges"]))
    table.add_row("pulled on resume", f"{stats['pulled']} · later touched (useful): {stats['pulled_touched']}")
    table.add_row("nodes the user forgot", f"{stats.get('forgotten', 0)} · put back: {stats.get('put_back', 0)}")
    if "graduation" in stats:
        grad = stats["graduation"]
        table.add_row("graduation", graduation_text(grad) if grad else "not available yet (warm graph / graduation not set up)")
    return table


def do_stats(
    settings: Settings,
    session: str | None,
    *,
    all_sessions: bool = False,
    as_json: bool = False,
    out: Console | None = None,
    fallback_when_missing: bool = False,
) -> None:
    out = out or console()
    if all_sessions:
        sids = list_sessions(settings)
        if not sids:
            raise InspectError(f"no sessions under {settings.sessions_dir} yet")
    else:
        sids = [resolve_session(settings, session, fallback_when_missing=fallback_when_missing).session_id]
    rows = collect(settings, sids)
    total = overall_stats(rows, graduation=graduation_outcomes(settings))
    if as_json:
        out.file.write(json.dumps({"sessions": rows, "overall": total}, indent=2, sort_keys=True, default=str) + "\n")
        return
    parts: list[Any] = []
    for r in rows:
        parts.append(render_stats(r, f"Session {r['session_id']}"))
        if r.get("probe_list") and not all_sessions:
            parts.append(render_probes(r["probe_list"]))
    if all_sessions:
        parts.append(render_stats(total, f"Overall ({count(total['sessions'], 'session')})"))
    elif total.get("graduation"):
        parts.append(Text(f"graduation: {graduation_text(total['graduation'])}"))
    out.print(Group(*parts))


def register(app: typer.Typer) -> None:
    """Add ``stats`` to the ``rgraph`` app."""

    @app.command("stats")
    def stats_cmd(
        session: Annotated[
            str | None, typer.Option("--session", "-s", help="Session id (default: this project's latest).")
        ] = None,
        all_sessions: Annotated[bool, typer.Option("--all", help="Every session, plus overall totals.")] = False,
        as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
    ) -> None:
        """Telemetry: events, gate firings, probes and cost, injected tokens, graph shape, useful pulls."""
        try:
            do_stats(settings_or_error(), session, all_sessions=all_sessions, as_json=as_json)
        except InspectError as exc:
            raise fail(str(exc)) from None
