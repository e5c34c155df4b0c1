"""Builders for the restore block's tests: the billing session of render/restore.py's example as a hot graph, and
helpers to find a block's lines."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from rolling_graph.core.config import RenderSettings
from rolling_graph.core.ids import edge_key
from rolling_graph.core.model import make_edge, make_node, new_document

NOW = datetime(2026, 11, 25, 14, 0, tzinfo=UTC)
R = RenderSettings()


# -- builders (the SCHEMA12 node shape) ---------------------------------------------------------
def node(doc: dict[str, Any], nid: str, label: str, kind: str, *, weight: float = 0.5, **facts: Any) -> str:
    n = make_node(label, "technical", kind, node_id=nid, weight=weight, now=NOW)
    if facts:
        n["facts"] = facts
    doc["nodes"][nid] = n
    return nid


def edge(doc: dict[str, Any], source: str, verb: str, target: str) -> None:
    doc["edges"][edge_key(source, verb, target)] = make_edge(source, verb, target, now=NOW)


def billing_session(fillers: int = 0) -> dict[str, Any]:
    """The restore block's example (render/restore.py): a session fixing double proration in a Django app."""
    doc = new_document("s", project="/home/ada/shop", now=NOW)
    node(doc, "req-old", "look at the billing module", "request", seq=1, by="user")
    node(doc, "req", "invoices for annual plans are prorated twice — find out why and fix it", "request", seq=3, by="user")
    node(doc, "t-done", "reproduce with the fixture customer", "task", status="completed", seq=20)
    node(doc, "t-now", "fix double proration in billing/proration.py", "task", status="in_progress", seq=60)
    node(doc, "t-next", "add a regression test for annual upgrades", "task", status="pending", seq=61)
    node(doc, "d-new", "proration happens only in `apply_plan_change` (not in the webhook)", "decision", seq=70, by="user")
    node(doc, "d-old", "prorate in StripeWebhookView", "decision", seq=30)
    edge(doc, "d-new", "supersedes", "d-old")
    node(doc, "f-pro", "billing/proration.py", "file", path="billing/proration.py", edits=6, reads=2, last_op="edit",
         what="`prorate_amount`, `apply_plan_change`", seq=72)
    node(doc, "f-hook", "billing/webhooks.py", "file", path="billing/webhooks.py", edits=2, last_op="edit", what="call to `prorate_amount` removed", seq=55)
    node(doc, "f-test", "tests/billing/test_proration.py", "file", path="tests/billing/test_proration.py", edits=1, writes=1, seq=74)
    node(doc, "c-test", "pytest tests/billing -q", "command", runs=3, outcome="pass", result="2 failed → 0 failed", seq=75)
    edge(doc, "c-test", "tests", "f-test")
    node(doc, "e-open", "`test_upgrade_mid_cycle` flaky under freezegun (tz)", "error", state="open", seq=76)
    node(doc, "e-done", "ImportError: cannot import name 'Plan'", "error", state="resolved", seq=40)
    for i, (label, kind) in enumerate([("billing/invoice_line.py", "file"), ("billing/plan.py", "file"), ("settings/base.py", "file"),
                                       ("customer_factory", "symbol"), ("stripe_event_id", "symbol"), ("BillingPeriod", "symbol"),
                                       ("annual_discount", "symbol"), ("conftest.py", "file")]):
        extra = {"path": label, "reads": 1} if kind == "file" else {}
        node(doc, f"n{i}", label, kind, seq=50 - i, **extra)
    for i in range(fillers):
        node(doc, f"filler-{i}", f"helper_function_{i}", "symbol", seq=i % 40, weight=0.2)
    return doc


def lines(text: str) -> list[str]:
    return text.splitlines()


def line_with(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(lines(text)) if needle in line)


MAP_HEADS = ("Also touched:", "Also known:")


def map_lines(text: str) -> list[str]:
    """The lines of the block's map of names: from ``Also touched:`` (or ``Also known:``) to
    the count line."""
    out: list[str] = []
    for line in text.splitlines():
        if line.startswith(MAP_HEADS):
            out = [line]
        elif out and not line.startswith(("Not shown", "</rolling-graph-memory")):
            out.append(line)
        elif out:
            break
    return out


def listed_names(text: str) -> list[str]:
    """The names the block's map lists, in the order it shows them: a file heading, then the
    names under it; the files listed together; then the names by who named them."""
    names: list[str] = []
    for line in map_lines(text):
        if line.startswith(MAP_HEADS):
            rest = line.split(":", 1)[1].strip()
        elif line.startswith("* "):
            head, _, rest = line[2:].partition(": ")
            names.append(head)
        else:
            head, sep, rest = line.partition(": ")
            rest = rest if sep else head
        names += [n for n in rest.split(", ") if n]
    return names
