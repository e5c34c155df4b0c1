"""The data ``rgraph view`` embeds in its page: kinds and facts bounded, untrusted text inert."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

from rolling_graph.cli.view_html import FACTS_MAX, SCRIPTS, embed_json, render_html, script_text, view_data
from rolling_graph.core.model import make_node


def doc_with(node_fields: dict[str, Any]) -> dict[str, Any]:
    node = make_node("Fix proration", "technical", "file", node_id="n1")
    node.update(node_fields)  # type: ignore[typeddict-item]
    return {"session_id": "s", "nodes": {"n1": node}, "edges": {}, "focus": ["n1"]}


def test_view_data_carries_the_kind_and_the_facts_of_a_node() -> None:
    doc = doc_with({"facts": {"path": "src/billing/proration.py", "edits": 3, "last_op": "edit", "outcome": None}})
    (node,) = view_data(doc, [])["nodes"]  # type: ignore[arg-type]
    assert node["kind"] == "file"
    assert node["facts"] == {"edits": 3, "last_op": "edit", "outcome": None, "path": "src/billing/proration.py"}


def test_facts_and_kinds_from_disk_are_bounded_and_flattened() -> None:
    hostile = {f"k{i:02d}": "x" * 5000 for i in range(40)} | {"nested": {"a": [1, 2]}}
    doc = doc_with({"facts": hostile, "kind": "k" * 500})
    (node,) = view_data(doc, [])["nodes"]  # type: ignore[arg-type]
    assert len(node["facts"]) == FACTS_MAX
    assert all(isinstance(v, str) and len(v) <= 160 for v in node["facts"].values())
    assert len(node["kind"]) <= 24
    assert view_data(doc_with({"facts": ["not", "a", "dict"]}), [])["nodes"][0]["facts"] == {}  # type: ignore[arg-type]


def test_the_page_embeds_every_script_and_nothing_can_close_its_tags() -> None:
    doc = doc_with({"label": "</script><script>alert(1)</script>", "facts": {"what": "<!-- -->"}})
    page = render_html(doc, [])  # type: ignore[arg-type]
    assert page.count("</script>") == 3  # the guard, the data block, the script: no more
    assert "<script>alert(1)" not in page and "<!-- -->" not in page
    text = script_text()
    assert text in page and "</" not in text
    starts = [text.index(marker) for marker in ("var RGLayout", "var RGData", "var RGDetails", "var RGControls", "'rg-status'")]
    assert starts == sorted(starts) and len(SCRIPTS) == 5  # each module before the one that uses it
    assert json.loads(embed_json({"a": "</script>"})) == {"a": "</script>"}


def test_every_script_in_the_assets_is_on_the_page() -> None:
    """A module split out of the view is inlined too (the page fetches nothing)."""
    assets = resources.files("rolling_graph.cli").joinpath("assets")
    assert sorted(p.name for p in assets.iterdir() if p.name.endswith(".js")) == sorted(SCRIPTS)
